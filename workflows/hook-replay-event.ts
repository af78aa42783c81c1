import { z } from 'zod';
import { eventUuid, hooks } from './hook/activities';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({ event_uuid: eventUuid() });

const output = z.object({
  event_uuid: z.string(),
  target_status: z.number().int().nullable().optional().describe("The target's answer to the last attempt; null when none came"),
  latency_ms: z.number().int().optional(),
  delivered_at: z.string().optional(),
  ...failureFields,
});

/**
 * Delivers a stored event, signed, to its endpoint's target_url: what the ingress starts for every
 * event it stores (hook.receive-webhook's test event excepted), and what
 * POST /api/hooks/events/{uuid}/replay starts. Network errors, 429 and 5xx are retried (4 attempts);
 * a final non-2xx fails the run with failure_type target_rejected; an expired event fails event_expired.
 */
export const replayEvent = defineWorkflow({
  workflow_type: 'hook.replay-event',
  version: '1.0',
  kind: 'Atomic',
  description: "Delivers a stored webhook event, signed, to its endpoint's target_url and records the attempt",
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
      const delivered = await hooks.hookDeliverEvent({ organization_uuid: ctx.organization_uuid, event_uuid: d.event_uuid });
      return { patch: delivered };
    },
  },
});
