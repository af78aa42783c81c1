/**
 * The workflow bundle's entry: one Temporal workflow per workflow type, whose
 * Temporal type name is the engine's workflow_type. Services that start runs
 * with the Temporal client directly import these and EngineWorkflowInput.
 */
import type { ComposedRunInput } from './composition/definition';
import { COMPOSED_WORKFLOW } from './constants';
import type { RunData } from './runtime/definition';
import { type EngineWorkflow, runDefinition } from './runtime/engine';
import { findDefinition } from './registry';

export type { EngineWorkflowInput } from './runtime/contract';
export { TASK_QUEUE } from './constants';

/** A type's workflow, whose definition loads when a run of it starts (registry.ts says why). */
function workflowOf(workflowType: string): EngineWorkflow {
  const workflow: EngineWorkflow = (input) => runDefinition(findDefinition(workflowType)!, input);
  Object.defineProperty(workflow, 'name', { value: workflowType });
  return workflow;
}

/** Every composed run (composition/workflow.ts), loaded like a type's definition. */
function composedWorkflow(input: ComposedRunInput): Promise<RunData> {
  return (require('./composition/workflow') as typeof import('./composition/workflow')).composedWorkflow(input);
}
Object.defineProperty(composedWorkflow, 'name', { value: COMPOSED_WORKFLOW });

export const esignDeleteUserAuthorization = workflowOf('esign.authorizations.delete-user-authorization');
export const esignGetResourceInformation = workflowOf('esign.resources.get-resource-information');
export const dbhostOperationsWait = workflowOf('dbhost.operations.wait');
export const dbhostEndpointsList = workflowOf('dbhost.endpoints.list');
export const paymentsWebhooksReceive = workflowOf('payments.webhooks.receive');
export const paymentsAccessGrantOnPayment = workflowOf('payments.access.grant_on_payment');
export const paymentsWebhooksReceiverChain = workflowOf('payments.webhooks.receiver-chain');
export const hookCreateRedirect = workflowOf('hook.create-redirect');
export const hookReceiveWebhook = workflowOf('hook.receive-webhook');
export const hookReplayEvent = workflowOf('hook.replay-event');
export const hookAcknowledgeEvent = workflowOf('hook.acknowledge-event');
export const hookExpirePendingEvents = workflowOf('hook.expire-pending-events');
export const webhookEndpointCreateVerifyAndReplayWorkflow = workflowOf('webhook.endpoint.create-verify-and-replay');
export const identityAppProvision = workflowOf('identity.app.provision');
export const identityAppConfigureClient = workflowOf('identity.app.configure-client');
export const identityEndUserSessionRevoke = workflowOf('identity.end-user.session.revoke');

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
