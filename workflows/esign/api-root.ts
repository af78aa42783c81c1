import { z } from 'zod';
import { bearerToken } from '../runtime/bearer-token';
import { providerActivityOptions } from '../runtime/provider-activities';

/** The 422 rule of a provider URL that is a URL but no API root (a query, a fragment, credentials, another path). */
export const API_ROOT_RULE = 'api_root';

/**
 * The e-signature API root, https://<host>/api. Whether plain http is allowed
 * for a host is deployment configuration (ALLOW_HTTP_HOSTS), checked by the API
 * at start and by the activity before any call.
 */
export const esignApiRoot = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .refine(
    (value) => {
      // zod runs refinements even after the url check failed, so this must not throw.
      if (!URL.canParse(value)) return false;
      const url = new URL(value);
      return /\/api\/?$/.test(url.pathname) && !url.search && !url.hash && !url.username && !url.password;
    },
    { error: 'must be an API root of the form https://<host>/api (no query, fragment or credentials)', params: { rule: API_ROOT_RULE } },
  )
  .describe('API root of the e-signature service, form https://<host>/api');

/**
 * An id the provider puts in a URL path (a user, an authorization). Its ids are GUIDs; letters,
 * digits, '-' and '_' cover them and never spell '.' or '..', which URL parsing would collapse
 * with the segment before (`userid: ".."` would DELETE the account's own path).
 */
export const esignPathId = (description: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { error: "must be a provider id: 1-100 letters, digits, '-' or '_'" })
    .describe(description);

export const esignApiToken = bearerToken()
  .optional()
  .describe('Bearer token; when omitted, the connection\'s token, else the worker\'s ESIGN_API_TOKEN');

export const esignConnection = z
  .uuid()
  .optional()
  .describe(
    "An esign connection of the organization: its api_token (used when api_token is omitted) and its base_url (used when base_url is omitted; any other base_url must have the same origin)",
  );

/**
 * An esign input names where to call: base_url, or a connection whose stored base_url is the
 * only place its token may go.
 */
export function withBaseUrlOrConnection<T extends z.ZodObject<{ base_url: z.ZodOptional; connection_uuid: typeof esignConnection }>>(input: T) {
  return input
    .superRefine(
      (data, ctx) => {
        if (data.base_url === undefined && data.connection_uuid === undefined) {
          ctx.addIssue({ code: 'invalid_type', expected: 'string', input: undefined, path: ['base_url'], message: 'is required without connection_uuid' });
        }
      },
      // Also when other fields failed, so that every failing field is named at once.
      { when: (payload) => payload.value !== null && typeof payload.value === 'object' },
    )
    .meta({ anyOf: [{ required: ['base_url'] }, { required: ['connection_uuid'] }] });
}

export const esignCallOutputs = {
  status_code: z.number().int().optional().describe('HTTP status of the provider call'),
  response: z.unknown().optional().describe('Parsed JSON body of the provider answer; null for an empty body'),
  failed_at: z.string().optional(),
};

export const alreadyAbsentOutput = {
  already_absent: z
    .literal(true)
    .optional()
    .describe('Set when the DELETE was re-sent after an attempt whose outcome was lost (a killed worker, a time-out) and the provider answered 404: the resource is gone'),
};

/** 5xx and time-outs back off until they have spent the call's budget, then the run fails. */
export const esignActivityOptions = providerActivityOptions('60s');
