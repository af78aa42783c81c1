import { patched } from '@temporalio/workflow';
import { z } from 'zod';
import type { EsignActivities } from '../activities/esign';
import { alreadyAbsentOutput, esignActivityOptions, esignApiRoot, esignApiToken, esignCallOutputs, esignConnection, esignPathId, withBaseUrlOrConnection } from './esign/api-root';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';
import { providerActivities } from './runtime/provider-activities';
import { providerOutcomeUnknown } from './runtime/provider-outcome';

const esign = providerActivities<EsignActivities>(esignActivityOptions);

const PATCH_CARRY_OUTCOME_UNKNOWN = 'esign-delete-carry-outcome-unknown';

/** In the run's carry: some DELETE of an earlier execution may have acted at the provider unanswered. */
const CARRY_OUTCOME_UNKNOWN = 'delete_outcome_unknown';

const input = withBaseUrlOrConnection(
  z.strictObject({
    base_url: esignApiRoot.optional(),
    api_token: esignApiToken,
    connection_uuid: esignConnection,
    accountid: z
      .string()
      .regex(/^(\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/, {
        error: 'must be an external account number (digits) or an account GUID',
      })
      .describe('External account number (integer) or account GUID'),
    authorizationid: esignPathId('Id of the user authorization'),
    userid: esignPathId('Id of the principal user'),
  }),
);

const output = z.object({
  base_url: z.string().optional().describe('Absent when the run used its connection\'s base_url'),
  api_token: z.string().optional().describe('Always "[redacted]" when a token was given'),
  connection_uuid: z.string().optional(),
  accountid: z.string(),
  authorizationid: z.string(),
  userid: z.string(),
  ...esignCallOutputs,
  ...alreadyAbsentOutput,
  ...failureFields,
});

/**
 * Deletes a user authorization: DELETE {base_url}/v2.1/accounts/{accountid}/users/{userid}/authorization/{authorizationid}.
 * Allowed by the provider only to an account administrator or the authorization's principal user.
 */
export const deleteUserAuthorization = defineWorkflow({
  workflow_type: 'esign.authorizations.delete-user-authorization',
  version: '1.0',
  kind: 'Atomic',
  description: 'Deletes a user authorization through the external e-signature REST API',
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
  prerequisites: [],
  secret_fields: ['api_token'],
  outbound_url_fields: ['base_url'],
  connection_url_fields: [{ connection: 'connection_uuid', url: 'base_url', plugin: 'esign' }],
  failure_stamp: 'failed_at',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const path = `/v2.1/accounts/${encodeURIComponent(d.accountid)}/users/${encodeURIComponent(d.userid)}/authorization/${encodeURIComponent(d.authorizationid)}`;
      try {
        const result = await esign.esignRequest({
          base_url: d.base_url,
          api_token: d.api_token,
          connection_uuid: d.connection_uuid,
          organization_uuid: ctx.organization_uuid,
          method: 'DELETE',
          path,
          token_required: true,
          ...(ctx.carry[CARRY_OUTCOME_UNKNOWN] === true ? { earlier_outcome_unknown: true as const } : {}),
        });
        return { patch: { ...result } };
      } catch (err) {
        // Kept in the failed run's checkpoint, so that a retry's 404 completes already_absent too.
        // Executions recorded before this carried nothing; asked only when there is something to keep.
        if (providerOutcomeUnknown(err) && patched(PATCH_CARRY_OUTCOME_UNKNOWN)) ctx.carry[CARRY_OUTCOME_UNKNOWN] = true;
        throw err;
      }
    },
  },
});
