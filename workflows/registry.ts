import { deleteUserAuthorization } from './esign-delete-user-authorization';
import { getResourceInformation } from './esign-get-resource-information';
import { endpointsList } from './dbhost-endpoints-list';
import { operationsWait } from './dbhost-operations-wait';
import { grantOnPayment } from './payments-access-grant-on-payment';
import { receive } from './payments-webhooks-receive';
import { receiverChain } from './payments-webhooks-receiver-chain';
import { acknowledgeEvent } from './hook-acknowledge-event';
import { createRedirect } from './hook-create-redirect';
import { expirePendingEvents } from './hook-expire-pending-events';
import { receiveWebhook } from './hook-receive-webhook';
import { replayEvent } from './hook-replay-event';
import { appConfigureClient } from './identity-app-configure-client';
import { appProvision } from './identity-app-provision';
import { endUserSessionRevoke } from './identity-end-user-session-revoke';
import type { WorkflowDefinition } from './runtime/definition';
import { webhookEndpointCreateVerifyAndReplay } from './webhook-endpoint-create-verify-and-replay';

/** Every workflow type the engine runs. The catalog, the API and the worker all read this list. */
export const definitions: readonly WorkflowDefinition[] = [
  deleteUserAuthorization,
  getResourceInformation,
  operationsWait,
  endpointsList,
  receive,
  grantOnPayment,
  receiverChain,
  createRedirect,
  receiveWebhook,
  replayEvent,
  acknowledgeEvent,
  expirePendingEvents,
  webhookEndpointCreateVerifyAndReplay,
  appProvision,
  appConfigureClient,
  endUserSessionRevoke,
];

export function findDefinition(workflowType: string): WorkflowDefinition | undefined {
  return definitions.find((d) => d.workflow_type === workflowType);
}
