import { z } from 'zod';
import { dbhostApiRoot } from '../../activities/dbhost';
import { API_ROOT_RULE, esignApiRoot } from '../../workflows/esign/api-root';
import { bearerToken } from '../../workflows/runtime/bearer-token';

/**
 * Provider families and the credential fields a connection of each holds.
 * `secrets` are encrypted at rest and never shown; `config` is shown.
 */
export interface PluginDefinition {
  name: string;
  description: string;
  secrets: z.ZodType;
  config: z.ZodType;
  /** The fields a prerequisite names, `?` marking optional ones. */
  fields: string[];
  /**
   * Where the secrets may be sent: the config field an organization sets it with, and the
   * destination a stored config resolves to (undefined: nowhere). Absent for a plugin whose
   * secrets are never sent anywhere.
   */
  destination?: { field: string; of(config: Record<string, unknown>): string | undefined };
}

const webhookSecret = z.string().min(8).max(512);

export const plugins: readonly PluginDefinition[] = [
  {
    name: 'esign',
    description: 'E-signature REST API credentials',
    secrets: z.strictObject({ api_token: bearerToken().max(4096).describe('Bearer token of the e-signature API') }),
    config: z.strictObject({ base_url: esignApiRoot.describe('API root the api_token belongs to, form https://<host>/api: the only origin it is sent to') }),
    fields: ['api_token', 'base_url'],
    // Connections stored before base_url existed have none: their token goes nowhere until it is set.
    destination: { field: 'base_url', of: (config) => (typeof config.base_url === 'string' ? config.base_url : undefined) },
  },
  {
    name: 'dbhost',
    description: 'Database-host API credentials',
    secrets: z.strictObject({ api_token: bearerToken().max(4096).describe('API key of the database-host account') }),
    config: z.strictObject({
      api_url: z
        .url({ protocol: /^https?$/ })
        // The token goes to paths built on this root: a query or fragment would swallow them.
        .refine(
          (value) => {
            if (!URL.canParse(value)) return false;
            const url = new URL(value);
            return !url.search && !url.hash && !url.username && !url.password;
          },
          { error: 'must be an API root without query, fragment or credentials', params: { rule: API_ROOT_RULE } },
        )
        .optional()
        .describe('API root; default the provider public API'),
    }),
    fields: ['api_token', 'api_url?'],
    destination: { field: 'api_url', of: dbhostApiRoot },
  },
  {
    name: 'payments',
    description: "Payment-provider webhook signing secrets of the organization's own account",
    secrets: z
      .strictObject({
        webhook_secret: webhookSecret.optional().describe('Default endpoint signing secret'),
        webhook_secrets: z
          .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), webhookSecret)
          .optional()
          .describe('Named endpoint signing secrets, chosen by webhook_secret_key'),
      })
      .refine((s) => s.webhook_secret !== undefined || Object.keys(s.webhook_secrets ?? {}).length > 0, {
        error: 'give webhook_secret or at least one of webhook_secrets',
      })
      // The refinement in JSON Schema (GET /api/plugins, the OpenAPI document), which cannot derive it.
      .meta({ anyOf: [{ required: ['webhook_secret'] }, { required: ['webhook_secrets'], properties: { webhook_secrets: { minProperties: 1 } } }] }),
    config: z.strictObject({
      receiver_workflow_type: z
        .string()
        .regex(/^virtual\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}@[1-9][0-9]{0,8}$/, {
          error: 'must be a composed workflow type virtual.<composition_uuid>@<version>',
        })
        .optional()
        .describe('The composition the ingress starts for each event instead of the default receiver chain'),
    }),
    fields: ['webhook_secret', 'webhook_secrets?'],
  },
];

export const findPlugin = (name: string) => plugins.find((p) => p.name === name);
