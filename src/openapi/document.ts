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
  totpEnabled,
  totpEnrolment,
  verifyEmailBody,
} from '../accounts/account-schemas';
import { definitions } from '../../workflows/registry';
import { jsonSchema } from '../catalog/catalog.service';
import { plugins } from '../plugins/plugins';
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

/** Every authenticated route may answer 401 and, past a rate limit (or the open-stream limit), 429 with Retry-After. */
const authenticated = {
  '401': { description: 'missing, unknown or revoked bearer token', content: errorContent },
  '429': {
    description: 'rate limited',
    headers: { 'Retry-After': { required: true, description: 'seconds', schema: { type: 'string', pattern: '^[0-9]+$' } } },
    content: errorContent,
  },
};
/** Routes with a JSON body: 400 malformed_json, 413 payload_too_large. */
const withBody = errors(400, 413);

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const uuidParam = { name: 'uuid', in: 'path', required: true, schema: { type: 'string' } };
const typeParam = { name: 'type', in: 'path', required: true, schema: { type: 'string' } };

/** A query parameter documented from the zod schema the endpoint validates with. */
function queryParam(name: string, s: z.ZodType) {
  const inner = s instanceof z.ZodOptional || s instanceof z.ZodDefault ? (s.unwrap() as z.ZodType) : s;
  return { name, in: 'query', required: false, schema: schema(inner, 'input') };
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

/** Temporal Schedules starting the organization's runs. */
function schedulePaths() {
  const action = (operationId: string, summary: string, answer: ReturnType<typeof ok>) => ({
    post: { operationId, summary, parameters: [idParam], responses: { ...answer, ...errors(404, 422), ...authenticated } },
  });
  return {
    '/api/schedules': {
      get: {
        operationId: 'listSchedules',
        summary: "The organization's schedules, newest first",
        responses: { ...ok(z.object({ schedules: z.array(scheduleView) }), '200', scheduleLinks('$response.body#/schedules/0/schedule_id')), ...authenticated },
      },
      post: {
        operationId: 'createSchedule',
        summary: 'Create a Temporal Schedule starting runs of a type (exactly one of cron and interval_seconds); initial_data is validated like a start',
        requestBody: { required: true, content: json(scheduleBodySchema, 'input') },
        responses: {
          ...ok(scheduleView, '201', scheduleLinks('$response.body#/schedule_id')),
          ...withBody,
          ...errors(403, 404, 422),
          ...authenticated,
        },
      },
    },
    '/api/schedules/{id}': {
      get: { operationId: 'getSchedule', summary: 'A schedule', parameters: [idParam], responses: { ...ok(scheduleView), ...errors(404, 422), ...authenticated } },
      delete: {
        operationId: 'deleteSchedule',
        summary: 'Delete a schedule (the runs it started are kept)',
        parameters: [idParam],
        responses: { '204': { description: 'deleted' }, ...errors(404, 422), ...authenticated },
      },
    },
    '/api/schedules/{id}/pause': action('pauseSchedule', 'Pause a schedule', ok(scheduleView)),
    '/api/schedules/{id}/unpause': action('unpauseSchedule', 'Unpause a schedule', ok(scheduleView)),
    '/api/schedules/{id}/trigger': action('triggerSchedule', 'Start a run now, even while paused', ok(scheduleTriggered, '202')),
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
          content: json(z.object({ code: z.string(), code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/) }), 'input'),
        },
        responses: {
          ...ok(z.object({ token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int() })),
          '400': { description: 'RFC 6749 error: invalid_request, invalid_grant', content: json(oauthError) },
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
  };
}

/** The OpenAPI 3.1 document, generated from the same zod schemas the API validates with. */
let built: ReturnType<typeof buildOpenApiDocument> | undefined;

/** Built once per process: the API serves it, and the 405 middleware reads its paths. */
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
        summary: 'Start TOTP enrolment for the signed-in end user (end-user token): a new secret to confirm',
        responses: { ...ok(totpEnrolment), ...errors(403, 409), ...authenticated },
      },
      delete: {
        operationId: 'removeEndUserTotp',
        summary: 'Turn TOTP off for the signed-in end user (end-user token)',
        responses: { '204': { description: 'TOTP removed' }, ...errors(403), ...authenticated },
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

export function buildOpenApiDocument() {
  const startBodies = definitions.map((d) => {
    const input = schema(d.input, 'input');
    return {
      type: 'object',
      title: d.workflow_type,
      required: ['workflow_type', 'initial_data'],
      additionalProperties: false,
      properties: { workflow_type: { const: d.workflow_type }, initial_data: input },
    };
  });
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
            ...ok(startResult, '201', runLinks('$response.body#/workflow_id')),
            ...withBody,
            ...errors(403, 404, 409, 422),
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
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
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
          responses: { ...ok(cancelResult, '202'), ...errors(404, 409, 422), ...authenticated },
        },
      },
      '/api/workflows/{id}/retry': {
        post: {
          operationId: 'retryRun',
          summary: 'Re-drive a FAILED or CANCELLED run from its last good state',
          parameters: [idParam],
          responses: { ...ok(startResult), ...errors(404, 409, 422), ...authenticated },
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
      ...temporalCodecPaths(),
      ...identityPaths(),
      ...endUserAccountPaths(),
    },
  };
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/temporal-codec/')) declareNoNul(operations);
  }
  return document;
}

const NO_NUL = '^[^\\u0000]*$';

/**
 * Says in the request schemas what StorableTextPipe enforces about NUL: none in any string or key
 * (a string with a pattern of its own gets the rule through allOf). Its other rule, no lone
 * surrogate, stays out of the patterns: a regular expression only states it under the `u` flag,
 * which not every JSON Schema validator applies.
 */
function declareNoNul(operations: Record<string, any>) {
  const walk = (node: any): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const types = [node.type].flat();
    if (types.includes('string') && node.const === undefined && node.enum === undefined) {
      if (node.pattern === undefined) node.pattern = NO_NUL;
      else if (node.pattern !== NO_NUL) node.allOf = [...(node.allOf ?? []), { pattern: NO_NUL }];
    }
    if ((types.includes('object') || node.properties) && node.additionalProperties !== false) node.propertyNames ??= { pattern: NO_NUL };
    for (const [key, child] of Object.entries(node)) if (key !== 'propertyNames') walk(child);
  };
  for (const operation of Object.values(operations)) {
    for (const parameter of operation.parameters ?? []) if (parameter.in !== 'header') walk(parameter.schema);
    for (const media of Object.values(operation.requestBody?.content ?? {})) walk((media as { schema: unknown }).schema);
  }
}
