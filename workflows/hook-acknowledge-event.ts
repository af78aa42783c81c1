import { z } from 'zod';
import { eventUuid, hooks } from './hook/activities';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({ event_uuid: eventUuid() });

const output = z.object({
  event_uuid: z.string(),
  event_state: z.literal('acknowledged').optional(),
  acknowledged_at: z.string().optional().describe('The first acknowledgement: acknowledging again keeps it'),
  ...failureFields,
});

/** Marks a stored event acknowledged; an expired event fails the run (event_expired). */
export const acknowledgeEvent = defineWorkflow({
  workflow_type: 'hook.acknowledge-event',
  version: '1.0',
  kind: 'Atomic',
  description: 'Acknowledges a stored webhook event',
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
      const acknowledged = await hooks.hookAcknowledgeEvent({ organization_uuid: ctx.organization_uuid, event_uuid: d.event_uuid });
      return { patch: acknowledged };
    },
  },
});
