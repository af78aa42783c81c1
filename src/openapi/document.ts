import { z } from 'zod';
import {
  emailVerified,
  passwordResetBody,
  passwordResetCompleteBody,
  registerBody,
  registered,
  resetAccepted,
  resetCompleted,
  totpConfirmBody,
  totpStartBody,
  totpRemoveBody,
  totpEnabled,
  totpEnrolment,
  verifyEmailBody,
} from '../accounts/account-schemas';
import { allDefinitions } from '../../workflows/registry';
import { jsonSchema } from '../catalog/catalog.service';
import { entitlementQuerySchema } from '../entitlements/entitlement-list';
import {
  createEndpointBody,
  endpointViewSchema,
  endpointWithSecret,
  eventViewSchema,
  ingressAccepted,
  listEventsQuery,
  replayResult,
  rotatedEndpoint,
} from '../hooks/hooks.schemas';
import { plugins } from '../plugins/plugins';
import { compositionBodySchema } from '../compositions/composition-body';
import { compositionCreated, compositionDetail, compositionView } from '../compositions/composition-views';
import { listQuerySchema } from '../runs/run-list';
import { scheduleBodySchema } from '../schedules/schedule-body';
import { payloadsBody } from '../temporal-codec/payload-json';
import { cancelResult, definition, prerequisites, run, scheduleTriggered, scheduleView, startResult, transition, typeList, typeSchema } from './run-schemas';

const errorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown() }),
});
const pluginList = z.object({
  plugins: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      fields: z.array(z.string()),
      secrets_schema: z.record(z.string(), z.unknown()),
      config_schema: z.record(z.string(), z.unknown()),
    }),
  ),
});
const connection = z.object({
  connection_uuid: z.string(),
  plugin: z.string(),
  name: z.string(),
  config: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});
const connectionCreated = z.object({ connection_uuid: z.string(), plugin: z.string(), name: z.string(), created_at: z.string() });
/** The server trims names before checking their length: at least one non-blank character. */
const connectionName = z.string().min(1).max(100).regex(/\S/);
const connectionUpdate = z.strictObject({
  name: connectionName.optional(),
  secrets: z.record(z.string(), z.unknown()).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});
const me = z.object({ user_id: z.string(), organization_uuid: z.string(), username: z.string(), token_type: z.string(), principal_type: z.string() });
const health = z.object({ status: z.string(), temporal: z.string(), database: z.string() });

function schema(s: z.ZodType, io: 'input' | 'output' = 'output') {
  const { $schema: _ignored, ...rest } = jsonSchema(s, io) as Record<string, unknown>;
  return rest;
}

const json = (s: z.ZodType, io: 'input' | 'output' = 'output') => ({ 'application/json': { schema: schema(s, io) } });
const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
// Every operation with a parameter or a body documents 422: a NUL character or a lone surrogate
// is refused anywhere (StorableTextPipe), a body nested too deep everywhere, besides each route's own rules.
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [String(s), { description: 'error', content: errorContent }]));
const ok = (s: z.ZodType, status = '200', links?: Record<string, unknown>) => ({
  [status]: { description: 'success', content: json(s), ...(links ? { links } : {}) },
});

const retryAfter = { 'Retry-After': { required: true, description: 'seconds', schema: { type: 'string', pattern: '^[0-9]+$' } } };
/** Every authenticated route may answer 401 and, past a rate limit (or the open-stream limit), 429 with Retry-After. */
const authenticated = {
  '401': {
    description: 'missing, unknown, revoked or expired bearer token',
    headers: {
      'WWW-Authenticate': {
        required: true,
        description: 'RFC 6750 §3: `Bearer` without a token; `Bearer error="invalid_token", error_description="…"` for a token sent and refused',
        schema: { type: 'string' },
      },
    },
    content: errorContent,
  },
  '429': { description: 'rate limited', headers: retryAfter, content: errorContent },
};
/** Routes that call Temporal: 503 with Retry-After when it (or the database) does not answer. */
const unavailable = {
  '503': {
    description: 'temporal_unavailable or database_unavailable: a dependency is not answering; repeat the request after Retry-After',
    headers: retryAfter,
    content: errorContent,
  },
};
/** Routes with a JSON body: 400 malformed_json, 413 payload_too_large, 415 unsupported_media_type (a body that is not JSON). */
const withBody = errors(400, 413, 415);

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const uuidParam = { name: 'uuid', in: 'path', required: true, schema: { type: 'string' } };
const typeParam = { name: 'type', in: 'path', required: true, schema: { type: 'string' } };

/** A query parameter documented from the zod schema the endpoint validates with. */
function queryParam(name: string, s: z.ZodType) {
  const inner = s instanceof z.ZodOptional || s instanceof z.ZodDefault ? (s.unwrap() as z.ZodType) : s;
  // zod leaves a default out of the input JSON Schema of a schema that transforms (queryInteger's).
  const fallback = s instanceof z.ZodDefault ? { default: s.def.defaultValue } : {};
  return { name, in: 'query', required: false, schema: { ...schema(inner, 'input'), ...fallback } };
}

/** OpenAPI links: the ids an answer carries, fed to the operations that take them. */
const link = (operationId: string, parameter: string, expression: string) => ({ operationId, parameters: { [parameter]: expression } });
const runLinks = (expression: string) => ({
  GetRun: link('getRun', 'id', expression),
  GetRunHistory: link('getRunHistory', 'id', expression),
  StreamRun: link('streamRun', 'id', expression),
  RetryRun: link('retryRun', 'id', expression),
  CancelRun: link('cancelRun', 'id', expression),
});
const typeLinks = (expression: string) => ({
  GetType: link('getWorkflowType', 'type', expression),
  GetTypeSchema: link('getWorkflowTypeSchema', 'type', expression),
  GetTypePrerequisites: link('getWorkflowTypePrerequisites', 'type', expression),
});
const connectionLinks = (expression: string) => ({
  GetConnection: link('getConnection', 'uuid', expression),
  UpdateConnection: link('updateConnection', 'uuid', expression),
  DeleteConnection: link('deleteConnection', 'uuid', expression),
});

/**
 * One Server-Sent Event, as OpenAPI 3.2's itemSchema would put it (and as 3.1 tools such
 * as schemathesis read `schema` for text/event-stream): `event`, `id` (the seq) and `data`
 * (JSON text).
 */
const streamEvent = {
  type: 'object',
  required: ['event', 'data'],
  properties: {
    event: { enum: ['transition', 'completed', 'failed', 'revoked'] },
    id: { type: 'string', pattern: '^[0-9]+$' },
    data: {
      type: 'string',
      contentMediaType: 'application/json',
      description:
        'transition: {seq, from, to, action, at}; completed: {workflow_id, state_name, state_data}; failed: {workflow_id, state_name, error, state_data}; revoked (the token was revoked; the server closes): {error}',
    },
  },
};

const scheduleLinks = (expression: string) => ({
  GetSchedule: link('getSchedule', 'id', expression),
  PauseSchedule: link('pauseSchedule', 'id', expression),
  UnpauseSchedule: link('unpauseSchedule', 'id', expression),
  TriggerSchedule: link('triggerSchedule', 'id', expression),
  DeleteSchedule: link('deleteSchedule', 'id', expression),
});

/** Webhook redirects: the organization's endpoints and events, and the public ingress. */
function hookPaths() {
  const endpointLinks = (expression: string) => ({
    GetHookEndpoint: link('getHookEndpoint', 'uuid', expression),
    ListHookEvents: link('listHookEvents', 'uuid', expression),
    RotateHookSecret: link('rotateHookSecret', 'uuid', expression),
    DeleteHookEndpoint: link('deleteHookEndpoint', 'uuid', expression),
  });
  const eventLinks = (expression: string) => ({
    GetHookEvent: link('getHookEvent', 'uuid', expression),
    ReplayHookEvent: link('replayHookEvent', 'uuid', expression),
    AcknowledgeHookEvent: link('acknowledgeHookEvent', 'uuid', expression),
  });
  const endpointParam = { name: 'endpoint_uuid', in: 'path', required: true, schema: { type: 'string' } };
  return {
    '/api/hooks/endpoints': {
      get: {
        operationId: 'listHookEndpoints',
        summary: "The organization's redirect endpoints (never their secrets)",
        responses: { ...ok(z.object({ endpoints: z.array(endpointViewSchema) })), ...authenticated },
      },
      post: {
        operationId: 'createHookEndpoint',
        summary: 'Create a redirect endpoint; a generated signing_secret is returned once, here',
        requestBody: { required: true, content: json(createEndpointBody, 'input') },
        responses: { ...ok(endpointWithSecret, '201', endpointLinks('$response.body#/endpoint_uuid')), ...withBody, ...errors(409, 422), ...authenticated },
      },
    },
    '/api/hooks/endpoints/{uuid}': {
      get: { operationId: 'getHookEndpoint', summary: 'A redirect endpoint', parameters: [uuidParam], responses: { ...ok(endpointViewSchema), ...errors(404, 422), ...authenticated } },
      delete: {
        operationId: 'deleteHookEndpoint',
        summary: 'Delete a redirect endpoint and its events',
        parameters: [uuidParam],
        responses: { '204': { description: 'deleted' }, ...errors(404, 422), ...authenticated },
      },
    },
    '/api/hooks/endpoints/{uuid}/rotate-secret': {
      post: {
        operationId: 'rotateHookSecret',
        summary: 'Replace the signing secret; the new one is returned once, here',
        parameters: [uuidParam],
        responses: { ...ok(rotatedEndpoint), ...errors(404, 422), ...authenticated },
      },
    },
    '/api/hooks/endpoints/{uuid}/events': {
      get: {
        operationId: 'listHookEvents',
        summary: "An endpoint's events, newest first",
        parameters: [uuidParam, queryParam('limit', listEventsQuery.shape.limit)],
        responses: { ...ok(z.object({ events: z.array(eventViewSchema) }), '200', eventLinks('$response.body#/events/0/event_uuid')), ...errors(404, 422), ...authenticated },
      },
    },
    '/api/hooks/events/{uuid}': {
      get: { operationId: 'getHookEvent', summary: 'An event with its delivery attempts', parameters: [uuidParam], responses: { ...ok(eventViewSchema), ...errors(404, 422), ...authenticated } },
    },
    '/api/hooks/events/{uuid}/replay': {
      post: {
        operationId: 'replayHookEvent',
        summary: 'Deliver the event again, signed, through a hook.replay-event run (409 event_expired once it has expired)',
        parameters: [uuidParam],
        responses: { ...ok(replayResult, '202', runLinks('$response.body#/workflow_id')), ...errors(404, 409, 422), ...unavailable, ...authenticated },
      },
    },
    '/api/hooks/events/{uuid}/acknowledge': {
      post: {
        operationId: 'acknowledgeHookEvent',
        summary: 'Mark a delivered event acknowledged (409 event_not_delivered while pending, event_expired once expired)',
        parameters: [uuidParam],
        responses: { ...ok(eventViewSchema), ...errors(404, 409, 422), ...authenticated },
      },
    },
    '/api/hooks/r/{endpoint_uuid}': {
      post: {
        operationId: 'receiveHookEvent',
        summary:
          "Public ingress (no bearer token): stores the body as received (UTF-8 text, at most 1 MiB), answers 202 once stored, then delivers it signed; an endpoint whose secret comes from secret_ref takes only events signed with it (Stripe-Signature or Webhook-Signature, else 400)",
        security: [],
        parameters: [endpointParam],
        requestBody: { required: false, content: { 'application/json': { schema: {} }, 'text/plain': { schema: { type: 'string' } } } },
        responses: { ...ok(ingressAccepted, '202', eventLinks('$response.body#/event_uuid')), ...errors(400, 404, 413, 422, 429, 508) },
      },
    },
  };
}

/** Temporal Schedules starting the organization's runs. */
function schedulePaths() {
  const action = (operationId: string, summary: string, answer: ReturnType<typeof ok>) => ({
    post: { operationId, summary, parameters: [idParam], responses: { ...answer, ...errors(404, 422), ...unavailable, ...authenticated } },
  });
  return {
    '/api/schedules': {
      get: {
        operationId: 'listSchedules',
        summary: "The organization's schedules, newest first",
        responses: { ...ok(z.object({ schedules: z.array(scheduleView) }), '200', scheduleLinks('$response.body#/schedules/0/schedule_id')), ...unavailable, ...authenticated },
      },
      post: {
        operationId: 'createSchedule',
        summary: 'Create a Temporal Schedule starting runs of a type (exactly one of cron and interval_seconds); initial_data is validated like a start',
        requestBody: { required: true, content: json(scheduleBodySchema, 'input') },
        responses: {
          ...ok(scheduleView, '201', scheduleLinks('$response.body#/schedule_id')),
          ...withBody,
          ...errors(403, 404, 422),
          ...unavailable,
          ...authenticated,
        },
      },
    },
    '/api/schedules/{id}': {
      get: { operationId: 'getSchedule', summary: 'A schedule', parameters: [idParam], responses: { ...ok(scheduleView), ...errors(404, 422), ...unavailable, ...authenticated } },
      delete: {
        operationId: 'deleteSchedule',
        summary: 'Delete a schedule (the runs it started are kept)',
        parameters: [idParam],
        responses: { '204': { description: 'deleted' }, ...errors(404, 422), ...unavailable, ...authenticated },
      },
    },
    '/api/schedules/{id}/pause': action('pauseSchedule', 'Pause a schedule', ok(scheduleView)),
    '/api/schedules/{id}/unpause': action('unpauseSchedule', 'Unpause a schedule', ok(scheduleView)),
    '/api/schedules/{id}/trigger': action('triggerSchedule', 'Start a run now, even while paused', ok(scheduleTriggered, '202')),
  };
}

const compositionLinks = (expression: string) => ({
  GetComposition: link('getComposition', 'uuid', expression),
  UpdateComposition: link('updateComposition', 'uuid', expression),
});

/** An organization's composed workflow types (virtual.<uuid>@N). */
function compositionPaths() {
  const body = { required: true, content: json(compositionBodySchema, 'input') };
  return {
    '/api/compositions': {
      get: {
        operationId: 'listCompositions',
        summary: "The organization's compositions (latest version of each), newest first",
        responses: { ...ok(z.object({ compositions: z.array(compositionView) }), '200', compositionLinks('$response.body#/compositions/0/composition_uuid')), ...authenticated },
      },
      post: {
        operationId: 'createComposition',
        summary: 'Compose built-in types into a type of the organization, virtual.<uuid>@1; 422 names each step and field that is wrong',
        requestBody: body,
        responses: { ...ok(compositionCreated, '201', { ...compositionLinks('$response.body#/composition_uuid'), ...typeLinks('$response.body#/workflow_type') }), ...withBody, ...errors(422), ...authenticated },
      },
    },
    '/api/compositions/{uuid}': {
      get: { operationId: 'getComposition', summary: 'A composition: its latest version and every version', parameters: [uuidParam], responses: { ...ok(compositionDetail), ...errors(404, 422), ...authenticated } },
      put: {
        operationId: 'updateComposition',
        summary: 'Create the next version (virtual.<uuid>@N+1); running and startable earlier versions are untouched',
        parameters: [uuidParam],
        requestBody: body,
        responses: { ...ok(compositionCreated, '200', typeLinks('$response.body#/workflow_type')), ...withBody, ...errors(404, 422), ...authenticated },
      },
    },
  };
}

/** Temporal's remote codec protocol (the Temporal UI's codec endpoint): Payloads as protobuf JSON, bytes in base64. */
function temporalCodecPaths() {
  const payloads = z.object({
    payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() })),
  });
  const op = (operationId: string, summary: string) => ({
    operationId,
    summary,
    parameters: [{ name: 'X-Namespace', in: 'header', required: false, schema: { type: 'string' } }],
    requestBody: { required: true, content: json(payloadsBody, 'input') },
    // A payload the caller may not decode is no error: it comes back unchanged (see the README).
    responses: { ...ok(payloads), ...withBody, ...errors(422), ...authenticated },
  });
  const preflight = (operationId: string) => ({
    operationId,
    summary: 'CORS preflight for the Temporal UI (origins in TEMPORAL_UI_ORIGINS)',
    security: [],
    parameters: [{ name: 'Origin', in: 'header', required: false, schema: { type: 'string' } }],
    responses: { '204': { description: 'preflight answered; CORS headers when the origin is allowed' }, ...errors(403) },
  });
  return {
    '/api/temporal-codec/decode': {
      post: op('decodePayloads', "Decrypt the caller's organization's Temporal payloads (all of them for an operator organization); others come back unchanged"),
      options: preflight('decodePayloadsPreflight'),
    },
    '/api/temporal-codec/encode': {
      post: op('encodePayloads', "Encrypt Temporal payloads under the caller's organization, as the service does"),
      options: preflight('encodePayloadsPreflight'),
    },
  };
}

/** The payment provider's signed webhook ingress (public) and the entitlements the chain grants. */
function paymentsPaths() {
  const accepted = z.object({ received: z.literal(true), workflow_id: z.string(), event_id: z.string() });
  const duplicate = z.object({ received: z.literal(true), duplicate: z.literal(true), workflow_id: z.string() });
  const entitlement = z.object({
    entitlement_uuid: z.string(),
    subject: z.string(),
    source_event_id: z.string(),
    event_type: z.string(),
    object_id: z.string().nullable(),
    event_metadata: z.record(z.string(), z.unknown()),
    workflow_id: z.string(),
    granted_at: z.string(),
  });
  const signatureHeader = (name: string) => ({
    name,
    in: 'header',
    required: false,
    description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">[,v1=…]',
    schema: { type: 'string' },
  });
  const e = entitlementQuerySchema.shape;
  return {
    '/api/hooks/payments/{connection_uuid}': {
      post: {
        operationId: 'receivePaymentWebhook',
        summary: "A payment provider's signed event for a payments connection: verified, then the connection's receiver chain starts once per event id",
        security: [],
        parameters: [
          { name: 'connection_uuid', in: 'path', required: true, schema: { type: 'string' } },
          signatureHeader('Stripe-Signature'),
          signatureHeader('Webhook-Signature'),
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'string', description: 'the raw event, signed byte for byte' } } } },
        responses: {
          ...ok(accepted, '202', runLinks('$response.body#/workflow_id')),
          ...ok(duplicate, '200'),
          '400': {
            description:
              'SIGNATURE_MISSING, SIGNATURE_MALFORMED, SIGNATURE_MISMATCH, TIMESTAMP_OUT_OF_TOLERANCE, PAYLOAD_INVALID or RECEIVER_INPUT_INVALID: nothing started, the event id not claimed',
            content: errorContent,
          },
          ...errors(404, 413, 422),
          ...unavailable,
          // Verified deliveries count per connection (ingress-endpoint), refused requests per client address (ingress-refused-client).
          '429': authenticated['429'],
        },
      },
    },
    '/api/entitlements': {
      get: {
        operationId: 'listEntitlements',
        summary: "The organization's entitlements, newest first",
        parameters: [queryParam('subject', e.subject), queryParam('limit', e.limit), { ...queryParam('cursor', e.cursor), description: 'next_cursor of the previous page' }],
        responses: { ...ok(z.object({ entitlements: z.array(entitlement), next_cursor: z.string().nullable() })), ...errors(400, 422), ...authenticated },
      },
    },
  };
}

const oauthError = z.object({ error: z.string(), error_description: z.string() });
const jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });
const identityApp = z.object({
  client_key: z.string(),
  client_uuid: z.string(),
  name: z.string(),
  redirect_uris: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

/** End-user sign-in on the API's origin (the login host serves the OIDC endpoints on its own). */
function identityPaths() {
  return {
    '/api/auth/end-user/token': {
      post: {
        operationId: 'exchangeEndUserCode',
        summary: 'Exchange an authorization code (with its PKCE code_verifier) for an end-user token',
        security: [],
        requestBody: {
          required: true,
          content: json(z.object({ code: z.string().min(1), code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/) }), 'input'),
        },
        responses: {
          ...ok(z.object({ token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int(), id_token: z.string() })),
          '400': {
            description:
              "RFC 6749 error: invalid_request, invalid_grant, or invalid_client when a browser's Origin is not that of one of the code's app's redirect URIs; a refused request uses the code up",
            content: json(oauthError),
          },
          ...errors(413, 422),
        },
      },
    },
    '/api/auth/end-user/jwks': {
      get: { operationId: 'getEndUserJwks', summary: 'The RS256 public keys end-user tokens are signed with', security: [], responses: ok(jwks) },
    },
    '/api/apps': {
      get: {
        operationId: 'listApps',
        summary: "The organization's apps (identity.app.provision); org members only",
        responses: { ...ok(z.object({ apps: z.array(identityApp) })), ...errors(403), ...authenticated },
      },
    },
    '/api/apps/{client_uuid}/end-users/{end_user_uuid}/mfa/totp': {
      delete: {
        operationId: 'clearEndUserTotp',
        summary: "Turn TOTP off for an end user of one of the organization's apps (org members only): the way back from a lost or foreign authenticator",
        parameters: [
          { name: 'client_uuid', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'end_user_uuid', in: 'path', required: true, schema: { type: 'string' } },
        ],
        responses: { '204': { description: 'TOTP off' }, ...errors(403, 404, 422), ...authenticated },
      },
    },
  };
}

/** End-user accounts (src/accounts/): registration and email links need no token; the mfa routes take an end-user token. */
function endUserAccountPaths() {
  const publicPost = (operationId: string, summary: string, body: z.ZodType, status: string, result: z.ZodType, statuses: number[]) => ({
    post: {
      operationId,
      summary,
      security: [],
      requestBody: { required: true, content: json(body, 'input') },
      responses: { ...ok(result, status), ...withBody, ...errors(...statuses) },
    },
  });
  return {
    '/api/auth/end-user/register': publicPost(
      'registerEndUser',
      "Create an end-user account in an app and email it a verification link (409: the email is taken in that app)",
      registerBody,
      '201',
      registered,
      [409, 422],
    ),
    '/api/auth/end-user/verify-email': publicPost('verifyEndUserEmail', "Confirm an end user's email with the token of its link", verifyEmailBody, '200', emailVerified, [422]),
    '/api/auth/end-user/password-reset': publicPost(
      'requestEndUserPasswordReset',
      'Email a reset link if the account exists (202 either way)',
      passwordResetBody,
      '202',
      resetAccepted,
      [422],
    ),
    '/api/auth/end-user/password-reset/complete': publicPost(
      'completeEndUserPasswordReset',
      "Set a new password with the token of a reset link; signs the account out everywhere",
      passwordResetCompleteBody,
      '200',
      resetCompleted,
      [422],
    ),
    '/api/auth/end-user/mfa/totp': {
      post: {
        operationId: 'enrolEndUserTotp',
        summary: "Start TOTP enrolment for the signed-in end user (end-user token) with the account's current password: a new secret to confirm",
        requestBody: { required: true, content: json(totpStartBody, 'input') },
        responses: { ...ok(totpEnrolment), ...withBody, ...errors(403, 409, 422), ...authenticated },
      },
      delete: {
        operationId: 'removeEndUserTotp',
        summary: 'Turn TOTP off for the signed-in end user (end-user token): while it is on, with a current code',
        requestBody: { required: false, content: json(totpRemoveBody, 'input') },
        responses: { '204': { description: 'TOTP removed' }, ...withBody, ...errors(403, 422), ...authenticated },
      },
    },
    '/api/auth/end-user/mfa/totp/confirm': {
      post: {
        operationId: 'confirmEndUserTotp',
        summary: 'Turn TOTP on with a current code for the enrolled secret (end-user token)',
        requestBody: { required: true, content: json(totpConfirmBody, 'input') },
        responses: { ...ok(totpEnabled), ...withBody, ...errors(403, 409, 422), ...authenticated },
      },
    },
  };
}

export function openApiDocument() {
  return (built ??= buildOpenApiDocument());
}

/** The OpenAPI 3.1 document, generated from the same zod schemas the API validates with. */
let built: ReturnType<typeof buildOpenApiDocument> | undefined;

/** Built once per process: the API serves it, and the 405 middleware reads its paths. */
export function buildOpenApiDocument() {
  const builtInStartBodies = allDefinitions().map((d) => {
    const input = schema(d.input, 'input');
    return {
      type: 'object',
      title: d.workflow_type,
      required: ['workflow_type', 'initial_data'],
      additionalProperties: false,
      properties: { workflow_type: { const: d.workflow_type }, initial_data: input },
    };
  });
  const composedStartBody = {
    type: 'object',
    title: 'virtual.<composition_uuid>@<version>',
    required: ['workflow_type', 'initial_data'],
    additionalProperties: false,
    properties: {
      workflow_type: { type: 'string', pattern: '^virtual\\.[0-9a-f-]{36}@[1-9][0-9]*$' },
      initial_data: { type: 'object', description: "the composition's free inputs: GET /api/workflows/types/{type}/schema" },
    },
  };
  const startBodies = [...builtInStartBodies, composedStartBody];

  const connectionBodies = plugins.map((p) => ({
    type: 'object',
    title: p.name,
    required: ['plugin', 'name', 'secrets'],
    additionalProperties: false,
    properties: {
      plugin: { const: p.name },
      name: schema(connectionName, 'input'),
      secrets: schema(p.secrets, 'input'),
      config: schema(p.config, 'input'),
    },
  }));
  const q = listQuerySchema.shape;
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Workflow Engine Service',
      version: '0.1.0',
      description: 'Typed workflows as durable, event-sourced state machines on Temporal.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: schema(errorBody) },
    },
    paths: {
      '/api/health': {
        get: {
          operationId: 'getHealth',
          summary: 'Health of the API and its dependencies',
          security: [],
          responses: { ...ok(health), '503': { description: 'a dependency is down', content: json(z.unknown()) } },
        },
      },
      '/api/auth/me': { get: { operationId: 'getMe', summary: 'Who the bearer token is', responses: { ...ok(me), ...authenticated } } },
      '/api/workflows/types': {
        get: {
          operationId: 'listWorkflowTypes',
          summary: 'List workflow types',
          parameters: [{ name: 'prefix', in: 'query', required: false, schema: { type: 'string' } }],
          responses: { ...ok(typeList, '200', typeLinks('$response.body#/types/0/workflow_type')), ...errors(422), ...authenticated },
        },
      },
      '/api/workflows/types/{type}': {
        get: {
          operationId: 'getWorkflowType',
          summary: 'A workflow type definition',
          parameters: [typeParam],
          responses: { ...ok(definition), ...errors(404, 422), ...authenticated },
        },
      },
      '/api/workflows/types/{type}/schema': {
        get: {
          operationId: 'getWorkflowTypeSchema',
          summary: 'Input and output JSON Schema',
          parameters: [typeParam],
          responses: { ...ok(typeSchema), ...errors(404, 422), ...authenticated },
        },
      },
      '/api/workflows/types/{type}/prerequisites': {
        get: {
          operationId: 'getWorkflowTypePrerequisites',
          summary: 'Setup guide',
          parameters: [typeParam],
          responses: { ...ok(prerequisites), ...errors(404, 422), ...authenticated },
        },
      },
      '/api/workflows/start': {
        post: {
          operationId: 'startRun',
          summary: 'Start a run',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: '1-255 printable ASCII characters; scoped per organization, kept 24 h',
              schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: startBodies } } } },
          responses: {
            '201': {
              description: 'success',
              content: json(startResult),
              links: runLinks('$response.body#/workflow_id'),
              headers: {
                'Idempotent-Replayed': {
                  required: false,
                  description: 'true when the Idempotency-Key returned the run an earlier identical start started; absent otherwise',
                  schema: { type: 'string', enum: ['true'] },
                },
              },
            },
            ...withBody,
            ...errors(403, 404, 409, 422),
            ...unavailable,
            ...authenticated,
          },
        },
      },
      '/api/workflows': {
        get: {
          operationId: 'listRuns',
          summary: "The organization's runs, newest first",
          parameters: [
            queryParam('workflow_type', q.workflow_type),
            queryParam('status', q.status),
            queryParam('state_name', q.state_name),
            { ...queryParam('schedule_id', q.schedule_id), description: 'only the runs this schedule started' },
            queryParam('limit', q.limit),
            { ...queryParam('cursor', q.cursor), description: 'next_cursor of the previous page' },
          ],
          responses: {
            ...ok(z.object({ runs: z.array(run), next_cursor: z.string().nullable() }), '200', runLinks('$response.body#/runs/0/workflow_id')),
            // 400 invalid_cursor: a cursor this endpoint did not issue.
            ...errors(400, 422),
            ...authenticated,
          },
        },
      },
      '/api/workflows/{id}': {
        get: { operationId: 'getRun', summary: 'A run', parameters: [idParam], responses: { ...ok(run), ...errors(404, 422), ...authenticated } },
      },
      '/api/workflows/{id}/history': {
        get: {
          operationId: 'getRunHistory',
          summary: 'Every transition of a run, in order',
          parameters: [idParam],
          responses: { ...ok(z.object({ workflow_id: z.string(), transitions: z.array(transition) })), ...errors(404, 422), ...authenticated },
        },
      },
      '/api/workflows/{id}/stream': {
        get: {
          operationId: 'streamRun',
          summary: 'Server-Sent Events: history, live transitions, then completed or failed',
          parameters: [idParam, { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^[0-9]*$' } }],
          responses: {
            '200': { description: 'event stream; the server closes it after completed or failed', content: { 'text/event-stream': { schema: streamEvent } } },
            ...errors(404, 422),
            ...authenticated,
          },
        },
      },
      '/api/workflows/{id}/cancel': {
        post: {
          operationId: 'cancelRun',
          summary: 'Cancel a running run: it fails with failure_type cancelled and ends CANCELLED (409 run_not_running once terminal)',
          parameters: [idParam],
          responses: {
            ...ok(cancelResult, '202'),
            ...errors(404, 422),
            '409': { description: 'run_not_running: the run is terminal; child_run: the run is a layer of a Dag (details.parent_workflow_id): cancel the parent', content: errorContent },
            ...unavailable,
            ...authenticated,
          },
        },
      },
      '/api/workflows/{id}/retry': {
        post: {
          operationId: 'retryRun',
          summary: 'Re-drive a FAILED or CANCELLED run from its last good state',
          parameters: [idParam],
          responses: {
            ...ok(startResult),
            ...errors(404, 422),
            '409': {
              description:
                'not_failed, retry_in_progress or not_retryable; child_run: the run is a layer of a Dag (details.parent_workflow_id): retry the parent, which resumes this child',
              content: errorContent,
            },
            ...unavailable,
            ...authenticated,
          },
        },
      },
      '/api/plugins': {
        get: { operationId: 'listPlugins', summary: 'Provider families and their credential fields', responses: { ...ok(pluginList), ...authenticated } },
      },
      '/api/connections': {
        get: {
          operationId: 'listConnections',
          summary: "The organization's connections (never their secrets)",
          parameters: [{ name: 'plugin', in: 'query', required: false, schema: { type: 'string' } }],
          responses: {
            ...ok(z.object({ connections: z.array(connection) }), '200', connectionLinks('$response.body#/connections/0/connection_uuid')),
            ...errors(422),
            ...authenticated,
          },
        },
        post: {
          operationId: 'createConnection',
          summary: 'Store a credential for one plugin (secrets encrypted at rest)',
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: connectionBodies } } } },
          responses: {
            ...ok(connectionCreated, '201', connectionLinks('$response.body#/connection_uuid')),
            ...withBody,
            ...errors(409, 422),
            ...authenticated,
          },
        },
      },
      '/api/connections/{uuid}': {
        get: { operationId: 'getConnection', summary: 'A connection', parameters: [uuidParam], responses: { ...ok(connection), ...errors(404, 422), ...authenticated } },
        patch: {
          operationId: 'updateConnection',
          summary: "Rename, reconfigure or rotate secrets (validated against the connection's plugin)",
          parameters: [uuidParam],
          requestBody: { required: true, content: json(connectionUpdate, 'input') },
          responses: { ...ok(connection), ...withBody, ...errors(404, 409, 422), ...authenticated },
        },
        delete: {
          operationId: 'deleteConnection',
          summary: 'Delete a connection',
          parameters: [uuidParam],
          responses: { '204': { description: 'deleted' }, ...errors(404, 422), ...authenticated },
        },
      },
      ...schedulePaths(),
      ...compositionPaths(),
      ...hookPaths(),
      ...temporalCodecPaths(),
      ...paymentsPaths(),
      ...identityPaths(),
      ...endUserAccountPaths(),
    },
  };
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/temporal-codec/')) declareNoNul(operations);
    declareEndUserForbidden(operations);
  }
  return document;
}

/** The operations an end-user token may call (@AllowEndUsers; test/unit/openapi-end-users.test.ts holds them to the controllers). */
const END_USER_OPERATIONS: ReadonlySet<string> = new Set([
  'getMe',
  'listWorkflowTypes',
  'getWorkflowType',
  'getWorkflowTypeSchema',
  'startRun',
  'listRuns',
  'getRun',
  'getRunHistory',
  'streamRun',
  'cancelRun',
  'retryRun',
  'enrolEndUserTotp',
  'confirmEndUserTotp',
  'removeEndUserTotp',
]);

/** Every other operation that takes a token answers an end user's 403 end_user_forbidden (AuthGuard). */
function declareEndUserForbidden(operations: Record<string, any>) {
  for (const operation of Object.values(operations)) {
    if (!operation.responses?.['401'] || END_USER_OPERATIONS.has(operation.operationId)) continue;
    operation.responses['403'] ??= { description: 'an end-user token: this route is for organization members (end_user_forbidden)', content: errorContent };
  }
}

const NO_NUL = '^[^\\u0000]*$';

/** Something in a pattern, not escaped, that may match NUL: any character, a negated class, \S \W \D, NUL itself, or an alternative. */
const MAY_MATCH_NUL = /(?:^|[^\\])(?:\\\\)*(?:\.|\[\^|\\[SWD0]|\\x00|\\u0000|\\c@|\|)/;

/**
 * Whether a pattern already rules NUL out: anchored at both ends, with only literals and classes
 * that leave NUL out. Conservative: a pattern it cannot judge gets the NUL rule beside it.
 */
export function patternExcludesNul(pattern: string): boolean {
  return pattern.startsWith('^') && /(?:^|[^\\])(?:\\\\)*\$$/.test(pattern) && !MAY_MATCH_NUL.test(pattern);
}

/**
 * Says in the request schemas what StorableTextPipe enforces about NUL: none in any string or key
 * (a string with a pattern of its own that may match NUL gets the rule through allOf). Its other rule, no lone
 * surrogate, stays out of the patterns: a regular expression only states it under the `u` flag,
 * which not every JSON Schema validator applies.
 */
function declareNoNul(operations: Record<string, any>) {
  const walk = (node: any): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const types = [node.type].flat();
    if (types.includes('string') && node.const === undefined && node.enum === undefined) {
      // A second pattern beside one that already excludes NUL says nothing, and schemathesis can
      // only generate for two patterns by filtering one's strings through the other.
      const stated = node.pattern === NO_NUL || patternExcludesNul(node.pattern ?? '') || (node.allOf ?? []).some((s: { pattern?: string }) => s.pattern === NO_NUL);
      if (node.pattern === undefined) node.pattern = NO_NUL;
      else if (!stated) node.allOf = [...(node.allOf ?? []), { pattern: NO_NUL }];
    }
    if ((types.includes('object') || node.properties) && node.additionalProperties !== false) node.propertyNames ??= { pattern: NO_NUL };
    for (const [key, child] of Object.entries(node)) if (key !== 'propertyNames') walk(child);
  };
  for (const operation of Object.values(operations)) {
    for (const parameter of operation.parameters ?? []) if (parameter.in !== 'header') walk(parameter.schema);
    for (const media of Object.values(operation.requestBody?.content ?? {})) walk((media as { schema: unknown }).schema);
  }
}
