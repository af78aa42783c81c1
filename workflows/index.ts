/**
 * The workflow bundle's entry: one Temporal workflow per workflow type, whose
 * Temporal type name is the engine's workflow_type. Services that start runs
 * with the Temporal client directly import these and EngineWorkflowInput.
 */
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
import { makeWorkflow } from './runtime/engine';
import { webhookEndpointCreateVerifyAndReplay } from './webhook-endpoint-create-verify-and-replay';
import { composedWorkflow } from './composition/workflow';

export type { EngineWorkflowInput } from './runtime/contract';
export { TASK_QUEUE } from './constants';

export const esignDeleteUserAuthorization = makeWorkflow(deleteUserAuthorization);
export const esignGetResourceInformation = makeWorkflow(getResourceInformation);
export const dbhostOperationsWait = makeWorkflow(operationsWait);
export const dbhostEndpointsList = makeWorkflow(endpointsList);
export const paymentsWebhooksReceive = makeWorkflow(receive);
export const paymentsAccessGrantOnPayment = makeWorkflow(grantOnPayment);
export const paymentsWebhooksReceiverChain = makeWorkflow(receiverChain);
export const hookCreateRedirect = makeWorkflow(createRedirect);
export const hookReceiveWebhook = makeWorkflow(receiveWebhook);
export const hookReplayEvent = makeWorkflow(replayEvent);
export const hookAcknowledgeEvent = makeWorkflow(acknowledgeEvent);
export const hookExpirePendingEvents = makeWorkflow(expirePendingEvents);
export const webhookEndpointCreateVerifyAndReplayWorkflow = makeWorkflow(webhookEndpointCreateVerifyAndReplay);
export const identityAppProvision = makeWorkflow(appProvision);
export const identityAppConfigureClient = makeWorkflow(appConfigureClient);
export const identityEndUserSessionRevoke = makeWorkflow(endUserSessionRevoke);

export {
  composedWorkflow as virtual,
  esignDeleteUserAuthorization as 'esign.authorizations.delete-user-authorization',
  esignGetResourceInformation as 'esign.resources.get-resource-information',
  dbhostOperationsWait as 'dbhost.operations.wait',
  dbhostEndpointsList as 'dbhost.endpoints.list',
  paymentsWebhooksReceive as 'payments.webhooks.receive',
  paymentsAccessGrantOnPayment as 'payments.access.grant_on_payment',
  paymentsWebhooksReceiverChain as 'payments.webhooks.receiver-chain',
  hookCreateRedirect as 'hook.create-redirect',
  hookReceiveWebhook as 'hook.receive-webhook',
  hookReplayEvent as 'hook.replay-event',
  hookAcknowledgeEvent as 'hook.acknowledge-event',
  hookExpirePendingEvents as 'hook.expire-pending-events',
  webhookEndpointCreateVerifyAndReplayWorkflow as 'webhook.endpoint.create-verify-and-replay',
  identityAppProvision as 'identity.app.provision',
  identityAppConfigureClient as 'identity.app.configure-client',
  identityEndUserSessionRevoke as 'identity.end-user.session.revoke',
};
