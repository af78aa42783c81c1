import { z } from 'zod';
import { endpointUuid, hooks } from './hook/activities';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({
  endpoint_uuid: endpointUuid(),
  ttl_seconds: z.number().int().min(0).default(86_400).describe('Pending events received longer ago than this expire (default 24 h)'),
});

const output = z.object({
  endpoint_uuid: z.string(),
  ttl_seconds: z.number().int(),
  expired_count: z.number().int().optional(),
  expired_event_uuids: z.array(z.string()).optional(),
  ...failureFields,
});

/** Expires an endpoint's events still pending (never delivered) after ttl_seconds. */
export const expirePendingEvents = defineWorkflow({
  workflow_type: 'hook.expire-pending-events',
  version: '1.0',
  kind: 'Atomic',
  description: "Expires a redirect endpoint's pending events older than a TTL",
  input,
  output,
  states: {
    pending: { initial: true, auto_advance: 'execute' },
    completed: { terminal: true, success: true },
    failed: { terminal: true },
  },
  transitions: [
    { from: 'pending', action: 'execute', to: 'completed' },
    { from: ANY_STATE, action: 'fail', to: 'failed' },
  ],
  exposed_to_end_users: false,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_at',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const expired = await hooks.hookExpirePendingEvents({
        organization_uuid: ctx.organization_uuid,
        endpoint_uuid: d.endpoint_uuid,
        ttl_seconds: d.ttl_seconds,
      });
      return { patch: expired };
    },
  },
});
