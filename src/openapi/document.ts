import { z } from 'zod';
import { definitions } from '../../workflows/registry';
import { jsonSchema } from '../catalog/catalog.service';

const errorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown() }),
});
const startResult = z.object({ workflow_id: z.string(), state_name: z.string(), is_terminal: z.boolean() });
const run = z.object({
  workflow_id: z.string(),
  workflow_type: z.string(),
  version: z.string(),
  organization_uuid: z.string(),
  state_name: z.string(),
  is_terminal: z.boolean(),
  status: z.enum(['RUNNING', 'COMPLETED', 'FAILED']),
  attempt: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
  state_data: z.record(z.string(), z.unknown()).optional().describe('The output of the workflow type, once terminal'),
});
const transition = z.object({
  seq: z.int(),
  from: z.string(),
  to: z.string(),
  action: z.string(),
  at: z.string(),
  attempt: z.int(),
  data: z.unknown(),
});
const typeList = z.object({
  types: z.array(
    z.object({ workflow_type: z.string(), version: z.string(), kind: z.string(), description: z.string(), has_prerequisites: z.boolean() }),
  ),
  namespaces: z.array(z.object({ name: z.string(), count: z.int() })),
});
const definition = z.object({
  workflow_type: z.string(),
  version: z.string(),
  kind: z.enum(['Atomic', 'Linear', 'Dag']),
  description: z.string(),
  states: z.array(
    z.object({ name: z.string(), initial: z.boolean(), terminal: z.boolean(), success: z.boolean(), auto_advance: z.string().nullable() }),
  ),
  transitions: z.array(z.object({ from: z.string(), action: z.string(), to: z.string() })),
  exposed_to_end_users: z.boolean(),
  has_prerequisites: z.boolean(),
});
const typeSchema = z.object({ input_schema: z.record(z.string(), z.unknown()), output_schema: z.record(z.string(), z.unknown()), has_prerequisites: z.boolean() });
const prerequisites = z.object({
  workflow_type: z.string(),
  satisfied: z.boolean(),
  required: z.array(z.object({ plugin: z.string(), fields: z.array(z.string()), connections: z.array(z.string()) })),
  steps: z.array(z.string()),
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
const connectionCreate = z.object({
  plugin: z.string(),
  name: z.string().min(1).max(100),
  secrets: z.record(z.string(), z.unknown()),
  config: z.record(z.string(), z.unknown()).optional(),
});
const connectionUpdate = z.object({
  name: z.string().min(1).max(100).optional(),
  secrets: z.record(z.string(), z.unknown()).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});
const me = z.object({ user_id: z.string(), organization_uuid: z.string(), username: z.string(), token_type: z.string(), principal_type: z.string() });
const health = z.object({ status: z.string(), temporal: z.string(), database: z.string() });

function schema(s: z.ZodType) {
  const { $schema: _ignored, ...rest } = jsonSchema(s, 'output') as Record<string, unknown>;
  return rest;
}

const json = (s: z.ZodType) => ({ 'application/json': { schema: schema(s) } });
const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]));
const ok = (s: z.ZodType, status = '200') => ({ [status]: { description: 'success', content: json(s) } });

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const uuidParam = { name: 'uuid', in: 'path', required: true, schema: { type: 'string' } };
const typeParam = { name: 'type', in: 'path', required: true, schema: { type: 'string' } };

/** Temporal's remote codec protocol (the Temporal UI's codec endpoint): Payloads as protobuf JSON, bytes in base64. */
function temporalCodecPaths() {
  const payloads = z.object({
    payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()).optional(), data: z.string().optional() })),
  });
  const op = (summary: string) => ({
    summary,
    parameters: [{ name: 'X-Namespace', in: 'header', required: false, schema: { type: 'string' } }],
    requestBody: { required: true, content: json(payloads) },
    responses: { ...ok(payloads), ...errors(400, 401, 413, 422) },
  });
  return {
    '/api/temporal-codec/decode': { post: op('Decrypt Temporal payloads (binary/encrypted); others come back unchanged') },
    '/api/temporal-codec/encode': { post: op('Encrypt Temporal payloads as the service does') },
  };
}

/** The OpenAPI 3.1 document, generated from the same zod schemas the API validates with. */
export function buildOpenApiDocument() {
  const startBodies = definitions.map((d) => {
    const { $schema: _ignored, ...input } = jsonSchema(d.input, 'input') as Record<string, unknown>;
    return {
      type: 'object',
      title: d.workflow_type,
      required: ['workflow_type', 'initial_data'],
      additionalProperties: false,
      properties: { workflow_type: { const: d.workflow_type }, initial_data: input },
    };
  });
  return {
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
        get: { summary: 'Health of the API and its dependencies', security: [], responses: { ...ok(health), '503': { description: 'a dependency is down', content: json(z.unknown()) } } },
      },
      '/api/auth/me': { get: { summary: 'Who the bearer token is', responses: { ...ok(me), ...errors(401) } } },
      '/api/workflows/types': {
        get: {
          summary: 'List workflow types',
          parameters: [{ name: 'prefix', in: 'query', required: false, schema: { type: 'string' } }],
          responses: { ...ok(typeList), ...errors(401) },
        },
      },
      '/api/workflows/types/{type}': {
        get: { summary: 'A workflow type definition', parameters: [typeParam], responses: { ...ok(definition), ...errors(401, 404) } },
      },
      '/api/workflows/types/{type}/schema': {
        get: { summary: 'Input and output JSON Schema', parameters: [typeParam], responses: { ...ok(typeSchema), ...errors(401, 404) } },
      },
      '/api/workflows/types/{type}/prerequisites': {
        get: { summary: 'Setup guide', parameters: [typeParam], responses: { ...ok(prerequisites), ...errors(401, 404) } },
      },
      '/api/workflows/start': {
        post: {
          summary: 'Start a run',
          parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: startBodies } } } },
          responses: { ...ok(startResult, '201'), ...errors(400, 401, 403, 404, 409, 413, 422) },
        },
      },
      '/api/workflows': {
        get: {
          summary: "The organization's runs, newest first",
          parameters: [
            { name: 'workflow_type', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'status', in: 'query', required: false, schema: { enum: ['RUNNING', 'COMPLETED', 'FAILED'] } },
            { name: 'state_name', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: { ...ok(z.object({ runs: z.array(run), next_cursor: z.string().nullable() })), ...errors(401, 422) },
        },
      },
      '/api/workflows/{id}': {
        get: { summary: 'A run', parameters: [idParam], responses: { ...ok(run), ...errors(401, 404) } },
      },
      '/api/workflows/{id}/history': {
        get: {
          summary: 'Every transition of a run, in order',
          parameters: [idParam],
          responses: { ...ok(z.object({ workflow_id: z.string(), transitions: z.array(transition) })), ...errors(401, 404) },
        },
      },
      '/api/workflows/{id}/stream': {
        get: {
          summary: 'Server-Sent Events: history, live transitions, then completed or failed',
          parameters: [idParam, { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }],
          responses: { '200': { description: 'event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errors(401, 404) },
        },
      },
      '/api/workflows/{id}/retry': {
        post: { summary: 'Re-drive a FAILED run from its last good state', parameters: [idParam], responses: { ...ok(startResult), ...errors(401, 404, 409) } },
      },
      '/api/plugins': {
        get: { summary: 'Provider families and their credential fields', responses: { ...ok(pluginList), ...errors(401) } },
      },
      '/api/connections': {
        get: {
          summary: "The organization's connections (never their secrets)",
          parameters: [{ name: 'plugin', in: 'query', required: false, schema: { type: 'string' } }],
          responses: { ...ok(z.object({ connections: z.array(connection) })), ...errors(401) },
        },
        post: {
          summary: 'Store a credential for one plugin (secrets encrypted at rest)',
          requestBody: { required: true, content: json(connectionCreate) },
          responses: { ...ok(connectionCreated, '201'), ...errors(400, 401, 409, 413, 422) },
        },
      },
      '/api/connections/{uuid}': {
        get: { summary: 'A connection', parameters: [uuidParam], responses: { ...ok(connection), ...errors(401, 404) } },
        patch: {
          summary: 'Rename, reconfigure or rotate secrets',
          parameters: [uuidParam],
          requestBody: { required: true, content: json(connectionUpdate) },
          responses: { ...ok(connection), ...errors(400, 401, 404, 409, 422) },
        },
        delete: { summary: 'Delete a connection', parameters: [uuidParam], responses: { '204': { description: 'deleted' }, ...errors(401, 404) } },
      },
      ...temporalCodecPaths(),
    },
  };
}
