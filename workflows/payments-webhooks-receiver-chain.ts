import { z } from 'zod';
import { grantOnPayment } from './payments-access-grant-on-payment';
import { GRANT_ON_PAYMENT } from './payments-webhooks-receive';
import { SIGNATURE_MAX } from './payments/event-fields';
import { dagOutput, defineDag } from './runtime/dag';
import { type DagPlan, ROUTE } from './runtime/dag-plan';
import type { WorkflowDefinition } from './runtime/definition';

export const RECEIVER_CHAIN = 'payments.webhooks.receiver-chain';

const fromInput = (name: string) => ({ from: 'input' as const, name });

/**
 * What the ingress starts for each accepted event (unless the connection names a composition):
 * the receive run, then the type its route_workflow_type names, fed its normalised fields by name.
 */
const plan: DagPlan = {
  layers: [
    {
      layer: '01_receive',
      step: 'receive',
      workflow_type: 'payments.webhooks.receive',
      inputs: {
        cloud_connection_uuid: fromInput('cloud_connection_uuid'),
        payload: fromInput('payload'),
        signature: fromInput('signature'),
        webhook_secret_key: fromInput('webhook_secret_key'),
      },
    },
    { layer: '02_route', step: 'route', workflow_type: ROUTE, inputs: {} },
  ],
};

/** Every type the route table names (payments-webhooks-receive.ts), so a route layer can map fields onto its inputs. */
const routed: Readonly<Record<string, WorkflowDefinition>> = { [GRANT_ON_PAYMENT]: grantOnPayment };

const input = z.strictObject({
  cloud_connection_uuid: z.uuid().describe("The payments connection the event was delivered to"),
  payload: z.string().min(1).max(1_048_576).describe('The raw request body exactly as received'),
  signature: z.string().max(SIGNATURE_MAX).describe("The provider's signature header value"),
  webhook_secret_key: z.string().min(1).max(64).optional().describe("The connection's named secret that verified the delivery; absent for its default"),
});

export const receiverChain = defineDag({
  workflow_type: RECEIVER_CHAIN,
  version: '1.0',
  description: 'A verified payment webhook: payments.webhooks.receive, then the workflow its route_workflow_type names (none when null)',
  input,
  // The payload is handed to the receive step only: echoed by the chain it would make its result
  // too large for Temporal (2 MiB) for a body near the ingress's 1 MiB.
  output: dagOutput(plan, {
    cloud_connection_uuid: z.string(),
    signature: z.string(),
    webhook_secret_key: z.string().optional(),
  }),
  unechoed_fields: ['payload'],
  plan,
  exposed_to_end_users: false,
  resolveDefinition: (workflowType) => routed[workflowType],
});
