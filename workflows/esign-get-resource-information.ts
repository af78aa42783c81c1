import { z } from 'zod';
import type { EsignActivities } from '../activities/esign';
import { esignActivityOptions, esignApiRoot, esignApiToken, esignCallOutputs, esignConnection, withBaseUrlOrConnection } from './esign/api-root';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';
import { providerActivities } from './runtime/provider-activities';

const esign = providerActivities<EsignActivities>(esignActivityOptions);

const input = withBaseUrlOrConnection(
  z.strictObject({
    base_url: esignApiRoot.optional(),
    api_token: esignApiToken,
    connection_uuid: esignConnection,
  }),
);

const output = z.object({
  base_url: z.string().optional().describe('Absent when the run used its connection\'s base_url'),
  api_token: z.string().optional().describe('Always "[redacted]" when a token was given'),
  connection_uuid: z.string().optional(),
  ...esignCallOutputs,
  ...failureFields,
});

/** Lists the base resources of the e-signature REST API version: GET {base_url}/v2.1 (served without a token). */
export const getResourceInformation = defineWorkflow({
  workflow_type: 'esign.resources.get-resource-information',
  version: '1.0',
  kind: 'Atomic',
  description: 'Lists the base resources for the e-signature REST API version',
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
      const result = await esign.esignRequest({
        base_url: d.base_url,
        api_token: d.api_token,
        connection_uuid: d.connection_uuid,
        organization_uuid: ctx.organization_uuid,
        method: 'GET',
        path: '/v2.1',
        token_required: false,
      });
      return { patch: { ...result } };
    },
  },
});
