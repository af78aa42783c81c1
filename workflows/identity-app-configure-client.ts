import { z } from 'zod';
import { clientKey, identity, redirectUris } from './identity/common';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z
  .strictObject({
    client_key: clientKey,
    add_redirect_uris: redirectUris.optional().describe('Registered as given (exact match at /authorize)'),
    remove_redirect_uris: z.array(z.string().max(2000)).max(20).optional(),
  })
  .refine((d) => d.add_redirect_uris?.length || d.remove_redirect_uris?.length, {
    message: 'give add_redirect_uris or remove_redirect_uris',
    path: ['add_redirect_uris'],
  });

const output = z.object({
  client_key: z.string(),
  client_uuid: z.string().optional(),
  redirect_uris: z.array(z.string()).optional().describe('The app\'s registered redirect URIs after the change'),
  ...failureFields,
});

/** Adds or removes an app's redirect URIs; an app of another organization fails the run as not_found. */
export const appConfigureClient = defineWorkflow({
  workflow_type: 'identity.app.configure-client',
  version: '1.0',
  kind: 'Atomic',
  description: "Changes an app's registered redirect URIs",
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
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_at',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const app = await identity.configureClient({
        organization_uuid: ctx.organization_uuid,
        client_key: d.client_key,
        add_redirect_uris: d.add_redirect_uris ?? [],
        remove_redirect_uris: d.remove_redirect_uris ?? [],
      });
      return { patch: { ...app } };
    },
  },
});
