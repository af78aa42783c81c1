import { z } from 'zod';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';
import { StepFailure } from './runtime/failure';
import { payments } from './payments/activities';
import { GRANT_ON_PAYMENT } from './payments-webhooks-receive';
import { eventText } from './payments/event-fields';

/** The normalised fields of payments.webhooks.receive, with the bound it holds them to: a receiver chain passes them on by name. */
const input = z.strictObject({
  event_id: eventText.min(1).describe('The source event: one entitlement per event id and organization'),
  event_type: eventText.min(1),
  livemode: z.boolean().optional(),
  object_id: eventText.nullable().optional(),
  client_reference_id: eventText.nullable().optional().describe('The paying subject, when checkout carried one'),
  customer_id: eventText.nullable().optional().describe('The paying subject otherwise'),
  subscription_id: eventText.nullable().optional(),
  payment_status: eventText.nullable().optional(),
  event_metadata: z.record(z.string(), z.unknown()).optional(),
});

const output = z.object({
  ...input.shape,
  event_id: z.string(),
  event_type: z.string(),
  subject: z.string().optional().describe('client_reference_id, else customer_id'),
  entitlement_uuid: z.string().optional(),
  granted: z.boolean().optional().describe('false when an earlier run already granted for this event'),
  granted_at: z.string().optional(),
  ...failureFields,
  failed_action: z.string().optional(),
});

/** Grants an entitlement to the paying subject in the run's organization, once per source event. */
export const grantOnPayment = defineWorkflow({
  workflow_type: GRANT_ON_PAYMENT,
  version: '1.0',
  kind: 'Atomic',
  description: 'Grants an entitlement to the paying subject (client_reference_id, else customer_id), once per source event',
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
  failure_stamp: 'failed_action',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const subject = d.client_reference_id || d.customer_id;
      if (!subject) throw new StepFailure('the event names no paying subject: neither client_reference_id nor customer_id', 'SUBJECT_MISSING', 'validation');
      const grant = await payments.grantEntitlement({
        organization_uuid: ctx.organization_uuid,
        subject,
        source_event_id: d.event_id,
        event_type: d.event_type,
        object_id: d.object_id ?? null,
        event_metadata: d.event_metadata ?? {},
      });
      return { patch: { subject, ...grant } };
    },
  },
});
