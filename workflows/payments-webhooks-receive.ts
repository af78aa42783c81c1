import { z } from 'zod';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';
import { payments } from './payments/activities';
import { SIGNATURE_MAX } from './payments/event-fields';

export const GRANT_ON_PAYMENT = 'payments.access.grant_on_payment';

/**
 * The route table: which workflow type a receiver chain runs next for an event (README, "Payments").
 * A checkout session completes unpaid for delayed payment methods: only its async success grants then.
 */
export const ROUTES: ReadonlyArray<{ event_type: string; payment_status?: string; route_workflow_type: string }> = [
  { event_type: 'checkout.session.completed', payment_status: 'paid', route_workflow_type: GRANT_ON_PAYMENT },
  { event_type: 'checkout.session.async_payment_succeeded', route_workflow_type: GRANT_ON_PAYMENT },
  { event_type: 'invoice.paid', route_workflow_type: GRANT_ON_PAYMENT },
];

export function routeFor(eventType: string, paymentStatus: string | null): string | null {
  const route = ROUTES.find((r) => r.event_type === eventType && (r.payment_status === undefined || r.payment_status === paymentStatus));
  return route?.route_workflow_type ?? null;
}

/**
 * failed_layer is an integer for this type (the spec's): 1 input, 2 connection and secret,
 * 3 signature, 4 event (parsing, replay); 0 anything else (time-outs, cancel, engine).
 */
export const FAILURE_LAYERS: Readonly<Record<string, number>> = {
  invalid_input: 1,
  connection_not_found: 2,
  connection_plugin_mismatch: 2,
  WEBHOOK_SECRET_NOT_FOUND: 2,
  SIGNATURE_MISSING: 3,
  SIGNATURE_MALFORMED: 3,
  SIGNATURE_MISMATCH: 3,
  TIMESTAMP_OUT_OF_TOLERANCE: 3,
  PAYLOAD_INVALID: 4,
  EVENT_REPLAYED: 4,
};

const input = z.strictObject({
  cloud_connection_uuid: z.uuid().describe("A payments connection of the run's organization (the customer's own provider account)"),
  payload: z.string().min(1).max(1_048_576).describe('The raw request body exactly as received'),
  signature: z.string().max(SIGNATURE_MAX).describe("The provider's signature header value (Stripe-Signature)"),
  webhook_secret: z.string().min(8).max(512).optional().describe('Endpoint signing secret; by default the connection\'s'),
  webhook_secret_key: z.string().min(1).max(64).optional().describe("A name in the connection's webhook_secrets"),
});

const normalised = {
  event_id: z.string().optional(),
  event_type: z.string().optional(),
  livemode: z.boolean().optional(),
  route_workflow_type: z.string().nullable().optional().describe('The workflow type a receiver chain runs next, or null'),
  object_id: z.string().nullable().optional().describe("Id of the event's primary object"),
  client_reference_id: z.string().nullable().optional().describe('Identity carried from checkout, when present'),
  customer_id: z.string().nullable().optional(),
  subscription_id: z.string().nullable().optional(),
  payment_status: z.string().nullable().optional(),
  event_metadata: z.record(z.string(), z.unknown()).optional().describe("The event object's metadata"),
};

/** Without the payload (unechoed_fields): the event is what the normalised fields say, and the raw body may be 1 MiB. */
const output = z.object({
  cloud_connection_uuid: z.string(),
  signature: z.string(),
  webhook_secret: z.string().optional().describe('Always "[redacted]" when given'),
  webhook_secret_key: z.string().optional(),
  ...normalised,
  ...failureFields,
  failed_layer: z.number().int().optional().describe('1 input, 2 connection and secret, 3 signature, 4 event; 0 otherwise'),
  failed_action: z.string().optional(),
});

/** Verifies a payment-provider webhook, parses the event, normalises its fields and names the next workflow. Changes no access. */
export const receive = defineWorkflow({
  workflow_type: 'payments.webhooks.receive',
  version: '1.0',
  kind: 'Atomic',
  description: 'Verifies a payment-provider webhook, parses the event, normalises fields and names the next workflow',
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
  prerequisites: [{ plugin: 'payments', description: "The organization's payment-provider webhook signing secrets" }],
  secret_fields: ['webhook_secret'],
  unechoed_fields: ['payload'],
  outbound_url_fields: [],
  failure_stamp: 'failed_action',
  failed_layer_of: (failure) => FAILURE_LAYERS[failure.failure_type] ?? 0,
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const event = await payments.receivePaymentEvent({ organization_uuid: ctx.organization_uuid, ...d });
      return { patch: { ...event, route_workflow_type: routeFor(event.event_type, event.payment_status) } };
    },
  },
});
