import type { WorkflowDefinition } from './runtime/definition';

/**
 * Every workflow type the engine runs, by workflow_type, each loaded on first use. The workflow
 * sandbox gives every run fresh module state, so it evaluates the bundle's modules again for each
 * run: a run of one type loads that type's definition and what it imports, not every
 * definition's schemas. That took a run's first workflow task from 11.8 to 5.2 ms of module
 * evaluation (median of 40 runs on a 2-core machine; most of what is left is zod's own). Each
 * entry is a `require` of its module for that reason; the `typeof import` keeps it type-checked.
 */
const loaders: Readonly<Record<string, () => WorkflowDefinition>> = {
  'esign.authorizations.delete-user-authorization': () =>
    (require('./esign-delete-user-authorization') as typeof import('./esign-delete-user-authorization')).deleteUserAuthorization,
  'esign.resources.get-resource-information': () =>
    (require('./esign-get-resource-information') as typeof import('./esign-get-resource-information')).getResourceInformation,
  'dbhost.operations.wait': () => (require('./dbhost-operations-wait') as typeof import('./dbhost-operations-wait')).operationsWait,
  'dbhost.endpoints.list': () => (require('./dbhost-endpoints-list') as typeof import('./dbhost-endpoints-list')).endpointsList,
  'payments.webhooks.receive': () => (require('./payments-webhooks-receive') as typeof import('./payments-webhooks-receive')).receive,
  'payments.access.grant_on_payment': () =>
    (require('./payments-access-grant-on-payment') as typeof import('./payments-access-grant-on-payment')).grantOnPayment,
  'payments.webhooks.receiver-chain': () =>
    (require('./payments-webhooks-receiver-chain') as typeof import('./payments-webhooks-receiver-chain')).receiverChain,
  'hook.create-redirect': () => (require('./hook-create-redirect') as typeof import('./hook-create-redirect')).createRedirect,
  'hook.receive-webhook': () => (require('./hook-receive-webhook') as typeof import('./hook-receive-webhook')).receiveWebhook,
  'hook.replay-event': () => (require('./hook-replay-event') as typeof import('./hook-replay-event')).replayEvent,
  'hook.acknowledge-event': () => (require('./hook-acknowledge-event') as typeof import('./hook-acknowledge-event')).acknowledgeEvent,
  'hook.expire-pending-events': () =>
    (require('./hook-expire-pending-events') as typeof import('./hook-expire-pending-events')).expirePendingEvents,
  'webhook.endpoint.create-verify-and-replay': () =>
    (require('./webhook-endpoint-create-verify-and-replay') as typeof import('./webhook-endpoint-create-verify-and-replay'))
      .webhookEndpointCreateVerifyAndReplay,
  'identity.app.provision': () => (require('./identity-app-provision') as typeof import('./identity-app-provision')).appProvision,
  'identity.app.configure-client': () =>
    (require('./identity-app-configure-client') as typeof import('./identity-app-configure-client')).appConfigureClient,
  'identity.end-user.session.revoke': () =>
    (require('./identity-end-user-session-revoke') as typeof import('./identity-end-user-session-revoke')).endUserSessionRevoke,
};

/** Every workflow_type the engine runs, in the catalog's order. */
export const workflowTypes: readonly string[] = Object.keys(loaders);

export function findDefinition(workflowType: string): WorkflowDefinition | undefined {
  return Object.hasOwn(loaders, workflowType) ? loaders[workflowType]() : undefined;
}

/** Every definition (loading them all). The catalog, the API and the tests read this list. */
export function allDefinitions(): readonly WorkflowDefinition[] {
  return workflowTypes.map((type) => loaders[type]());
}
