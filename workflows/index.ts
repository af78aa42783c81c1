/**
 * The workflow bundle's entry: one Temporal workflow per workflow type, whose
 * Temporal type name is the engine's workflow_type. Services that start runs
 * with the Temporal client directly import these and EngineWorkflowInput.
 */
import { deleteUserAuthorization } from './esign-delete-user-authorization';
import { getResourceInformation } from './esign-get-resource-information';
import { endpointsList } from './dbhost-endpoints-list';
import { operationsWait } from './dbhost-operations-wait';
import { acknowledgeEvent } from './hook-acknowledge-event';
import { createRedirect } from './hook-create-redirect';
import { expirePendingEvents } from './hook-expire-pending-events';
import { receiveWebhook } from './hook-receive-webhook';
import { replayEvent } from './hook-replay-event';
import { makeWorkflow } from './runtime/engine';
import { composedWorkflow } from './composition/workflow';
import { webhookEndpointCreateVerifyAndReplay } from './webhook-endpoint-create-verify-and-replay';

export type { EngineWorkflowInput } from './runtime/contract';
export { TASK_QUEUE } from './constants';

export const esignDeleteUserAuthorization = makeWorkflow(deleteUserAuthorization);
export const esignGetResourceInformation = makeWorkflow(getResourceInformation);
export const dbhostOperationsWait = makeWorkflow(operationsWait);
export const dbhostEndpointsList = makeWorkflow(endpointsList);
export const hookCreateRedirect = makeWorkflow(createRedirect);
export const hookReceiveWebhook = makeWorkflow(receiveWebhook);
export const hookReplayEvent = makeWorkflow(replayEvent);
export const hookAcknowledgeEvent = makeWorkflow(acknowledgeEvent);
export const hookExpirePendingEvents = makeWorkflow(expirePendingEvents);
export const webhookEndpointCreateVerifyAndReplayWorkflow = makeWorkflow(webhookEndpointCreateVerifyAndReplay);

export {
  composedWorkflow as virtual,
  esignDeleteUserAuthorization as 'esign.authorizations.delete-user-authorization',
  esignGetResourceInformation as 'esign.resources.get-resource-information',
  dbhostOperationsWait as 'dbhost.operations.wait',
  dbhostEndpointsList as 'dbhost.endpoints.list',
  hookCreateRedirect as 'hook.create-redirect',
  hookReceiveWebhook as 'hook.receive-webhook',
  hookReplayEvent as 'hook.replay-event',
  hookAcknowledgeEvent as 'hook.acknowledge-event',
  hookExpirePendingEvents as 'hook.expire-pending-events',
  webhookEndpointCreateVerifyAndReplayWorkflow as 'webhook.endpoint.create-verify-and-replay',
};
