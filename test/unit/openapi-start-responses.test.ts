import { buildOpenApiDocument } from '../../src/openapi/document';

type Responses = Record<string, { headers?: Record<string, { required?: boolean; schema?: unknown }>; content?: unknown }>;
const operations = () => {
  const paths = buildOpenApiDocument().paths as Record<string, Record<string, { operationId: string; responses: Responses }>>;
  return new Map(Object.values(paths).flatMap((item) => Object.values(item).map((op) => [op.operationId, op.responses] as const)));
};

describe('the OpenAPI document of the routes that call Temporal', () => {
  it.each(['startRun', 'retryRun', 'cancelRun', 'replayHookEvent', 'receivePaymentWebhook', 'createSchedule', 'triggerSchedule'])(
    '%s declares 503 with Retry-After and the error body',
    (operationId) => {
      const unavailable = operations().get(operationId)?.['503'];
      expect(unavailable?.headers?.['Retry-After']).toMatchObject({ required: true, schema: { type: 'string', pattern: '^[0-9]+$' } });
      expect(unavailable?.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
    },
  );

  it("declares the start's Idempotent-Replayed header on its 201", () => {
    expect(operations().get('startRun')?.['201'].headers?.['Idempotent-Replayed']).toMatchObject({ required: false, schema: { type: 'string', enum: ['true'] } });
  });
});
