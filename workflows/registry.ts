import { deleteUserAuthorization } from './esign-delete-user-authorization';
import { getResourceInformation } from './esign-get-resource-information';
import { endpointsList } from './dbhost-endpoints-list';
import { operationsWait } from './dbhost-operations-wait';
import { appConfigureClient } from './identity-app-configure-client';
import { appProvision } from './identity-app-provision';
import { endUserSessionRevoke } from './identity-end-user-session-revoke';
import type { WorkflowDefinition } from './runtime/definition';

/** Every workflow type the engine runs. The catalog, the API and the worker all read this list. */
export const definitions: readonly WorkflowDefinition[] = [
  deleteUserAuthorization,
  getResourceInformation,
  operationsWait,
  endpointsList,
  appProvision,
  appConfigureClient,
  endUserSessionRevoke,
];

export function findDefinition(workflowType: string): WorkflowDefinition | undefined {
  return definitions.find((d) => d.workflow_type === workflowType);
}
