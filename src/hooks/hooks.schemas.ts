import { z } from 'zod';
import { SECRET_REF } from '../../workflows/hook/contract';
import { queryInteger } from '../common/query-integer';

export const createEndpointBody = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('Unique in the organization'),
  target_url: z.string().min(1).max(2048).describe('https unless the host is in ALLOW_HTTP_HOSTS; no non-public address outside OUTBOUND_ALLOW'),
  secret_ref: z
    .string()
    .regex(SECRET_REF, { error: 'must be <connection_uuid>/<secret_name>' })
    .optional()
    .describe(
      "<connection_uuid>/webhook_secret or <connection_uuid>/webhook_secrets.<key>: a payments connection's webhook signing secret becomes the signing secret, and the ingress then takes only events signed with it",
    ),
});
export type CreateEndpointBody = z.output<typeof createEndpointBody>;

export const listEventsQuery = z.strictObject({
  limit: queryInteger({ min: 1, max: 500, default: 100 }),
});
export type ListEventsQuery = z.output<typeof listEventsQuery>;

export const endpointViewSchema = z.object({
  endpoint_uuid: z.string(),
  name: z.string(),
  target_url: z.string(),
  ingress_url: z.string().describe('POST events here, without a bearer token'),
  secret_source: z.enum(['generated', 'secret_ref']),
  secret_ref: z.string().nullable(),
  state: z.string(),
  created_at: z.string(),
});
export const endpointWithSecret = endpointViewSchema.extend({
  signing_secret: z.string().optional().describe('Returned once, here; absent when the secret came from secret_ref'),
});
export const rotatedEndpoint = endpointViewSchema.extend({ signing_secret: z.string().describe('The new secret, returned once') });

export const eventViewSchema = z.object({
  event_uuid: z.string(),
  endpoint_uuid: z.string(),
  state: z.enum(['pending', 'delivered', 'acknowledged', 'expired']),
  body: z.string().describe('As received'),
  headers: z.record(z.string(), z.string()).describe('content-type, user-agent, idempotency-key, x-request-id, webhook-id, webhook-timestamp when sent'),
  received_at: z.string(),
  delivered_at: z.string().nullable(),
  acknowledged_at: z.string().nullable(),
  expired_at: z.string().nullable(),
  attempts: z.array(z.object({ at: z.string(), status_code: z.number().int().nullable(), latency_ms: z.number().int(), error: z.string().optional() })),
});
export const replayResult = z.object({ event_uuid: z.string(), workflow_id: z.string().describe('The hook.replay-event run delivering it') });
export const ingressAccepted = z.object({ event_uuid: z.string() });
