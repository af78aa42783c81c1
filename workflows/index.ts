/**
 * The workflow bundle's entry: one Temporal workflow per workflow type, whose
 * Temporal type name is the engine's workflow_type. Services that start runs
 * with the Temporal client directly import these and EngineWorkflowInput.
 */
import { deleteUserAuthorization } from './esign-delete-user-authorization';
import { getResourceInformation } from './esign-get-resource-information';
import { endpointsList } from './dbhost-endpoints-list';
import { operationsWait } from './dbhost-operations-wait';
import { appConfigureClient } from './identity-app-configure-client';
import { appProvision } from './identity-app-provision';
import { endUserSessionRevoke } from './identity-end-user-session-revoke';
import { makeWorkflow } from './runtime/engine';

export type { EngineWorkflowInput } from './runtime/contract';
export { TASK_QUEUE } from './constants';

export const esignDeleteUserAuthorization = makeWorkflow(deleteUserAuthorization);
export const esignGetResourceInformation = makeWorkflow(getResourceInformation);
export const dbhostOperationsWait = makeWorkflow(operationsWait);
export const dbhostEndpointsList = makeWorkflow(endpointsList);
export const identityAppProvision = makeWorkflow(appProvision);
export const identityAppConfigureClient = makeWorkflow(appConfigureClient);
export const identityEndUserSessionRevoke = makeWorkflow(endUserSessionRevoke);

export {
  esignDeleteUserAuthorization as 'esign.authorizations.delete-user-authorization',
  esignGetResourceInformation as 'esign.resources.get-resource-information',
  dbhostOperationsWait as 'dbhost.operations.wait',
  dbhostEndpointsList as 'dbhost.endpoints.list',
  identityAppProvision as 'identity.app.provision',
  identityAppConfigureClient as 'identity.app.configure-client',
  identityEndUserSessionRevoke as 'identity.end-user.session.revoke',
};
