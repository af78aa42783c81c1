import { z } from 'zod';
import { identity, redirectUris } from './identity/common';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({
  name: z.string().trim().min(1).max(200).describe("The app's name, shown to its users"),
  redirect_uris: redirectUris.min(1).describe('Exact URIs the login host may send codes to: https, or http on a loopback host; no fragment'),
});

const output = z.object({
  name: z.string().optional(),
  redirect_uris: z.array(z.string()).optional(),
  client_key: z.string().optional().describe('The public client identifier (client_id in OIDC terms); not a secret'),
  client_uuid: z.string().optional(),
  integration: z
    .object({
      issuer: z.string(),
      discovery_url: z.string(),
      authorize_url: z.string(),
      token_url: z.string(),
      jwks_url: z.string(),
      flow: z.literal('authorization_code_pkce'),
      sdk: z.object({ package: z.string(), install: z.string(), snippet: z.string() }),
    })
    .optional(),
  ...failureFields,
});

/** Registers an OIDC client (a browser app of the organization) on the login host; its redirect URIs work at once. */
export const appProvision = defineWorkflow({
  workflow_type: 'identity.app.provision',
  version: '1.0',
  kind: 'Atomic',
  description: 'Registers an app whose end users sign in on the login host (OIDC authorization code with PKCE)',
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
      const app = await identity.provisionApp({ organization_uuid: ctx.organization_uuid, provision_key: ctx.workflow_id, name: d.name, redirect_uris: d.redirect_uris });
      return { patch: { ...app } };
    },
  },
});
