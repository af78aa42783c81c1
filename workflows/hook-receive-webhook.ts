import { z } from 'zod';
import { DEFAULT_TEST_EVENT } from './hook/contract';
import { endpointUuid, hooks } from './hook/activities';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({
  endpoint_uuid: endpointUuid(),
  test_event: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('The JSON object posted; default {"type":"engine.test","data":{...}}, the only one an endpoint whose secret comes from secret_ref takes'),
});

const output = z.object({
  endpoint_uuid: z.string(),
  test_event: z.record(z.string(), z.unknown()).optional(),
  event_uuid: z.string().optional(),
  ingress_status: z.literal(202).optional(),
  ...failureFields,
});

/**
 * Posts a test event to the endpoint's own public ingress URL over HTTP and confirms it was stored.
 * The ingress does not deliver it: hook.replay-event does (layer 3 of the webhook Dag).
 */
export const receiveWebhook = defineWorkflow({
  workflow_type: 'hook.receive-webhook',
  version: '1.0',
  kind: 'Atomic',
  description: "Posts a test event to a redirect endpoint's public ingress and confirms it was stored (hook.replay-event delivers it)",
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
      const received = await hooks.hookReceiveWebhook({
        organization_uuid: ctx.organization_uuid,
        endpoint_uuid: d.endpoint_uuid,
        test_event: d.test_event ?? DEFAULT_TEST_EVENT,
        request_id: `${ctx.workflow_id}#${ctx.attempt}`,
      });
      return { patch: received };
    },
  },
});
