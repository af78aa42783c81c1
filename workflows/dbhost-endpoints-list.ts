import { z } from 'zod';
import type { DbhostActivities } from '../activities/dbhost';
import { dbhostActivityOptions, dbhostConnection, dbhostPrerequisites, failedAction, providerId } from './dbhost/common';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';
import { providerActivities } from './runtime/provider-activities';

const dbhost = providerActivities<DbhostActivities>(dbhostActivityOptions);

const input = z.strictObject({
  connection_uuid: dbhostConnection,
  dbhost_project_id: providerId('Project to list endpoints for'),
});

const output = z.object({
  connection_uuid: z.string(),
  dbhost_project_id: z.string(),
  endpoints: z
    .array(z.record(z.string(), z.unknown()))
    .optional()
    .describe('Endpoint objects exactly as the provider returns them: id, host, branch_id, type (read_write or read_only), current_state, …'),
  ...failureFields,
  ...failedAction,
});

/**
 * Lists the compute endpoints of a database-host project: GET {dbhost_api}/api/v2/projects/{dbhost_project_id}/endpoints
 * with the connection's api_token. A 4xx is not retried (failure_type unauthorized, not_found, forbidden, …);
 * 5xx, 429 and time-outs are retried with backoff until 4 of them, then the run fails (a lost worker costs nothing).
 */
export const endpointsList = defineWorkflow({
  workflow_type: 'dbhost.endpoints.list',
  version: '1.0',
  kind: 'Atomic',
  description: 'Lists the compute endpoints of a database-host project',
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
  prerequisites: dbhostPrerequisites,
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_action',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const { endpoints } = await dbhost.dbhostListEndpoints({
        organization_uuid: ctx.organization_uuid,
        connection_uuid: d.connection_uuid,
        dbhost_project_id: d.dbhost_project_id,
      });
      return { patch: { endpoints } };
    },
  },
});
