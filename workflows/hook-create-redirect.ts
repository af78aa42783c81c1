import { z } from 'zod';
import { SECRET_REF } from './hook/contract';
import { hooks } from './hook/activities';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const input = z.strictObject({
  endpoint_name: z.string().min(1).max(100).optional().describe('Unique in the organization; default "redirect-" + the run\'s workflow id'),
  target_url: z.string().describe('Where received events are forwarded, signed: https unless the host is in ALLOW_HTTP_HOSTS'),
  secret_ref: z
    .string()
    .regex(SECRET_REF, { error: 'must be <connection_uuid>/<secret_name>' })
    .optional()
    .describe(
      "<connection_uuid>/webhook_secret or <connection_uuid>/webhook_secrets.<key>: a payments connection's webhook signing secret, used as the signing secret (the endpoint then takes only events signed with it); without it one is generated",
    ),
});

const output = z.object({
  endpoint_name: z.string().optional(),
  target_url: z.string(),
  secret_ref: z.string().optional(),
  endpoint_uuid: z.string().optional(),
  ingress_url: z.string().optional().describe('POST events here (no bearer token)'),
  secret_source: z.enum(['generated', 'secret_ref']).optional().describe('The secret itself is never in a run: rotate-secret returns a new one'),
  ...failureFields,
});

/**
 * Creates a webhook redirect endpoint, or finds the one this organization already has under that
 * name with the same target_url (a re-driven layer never creates a second one).
 */
export const createRedirect = defineWorkflow({
  workflow_type: 'hook.create-redirect',
  version: '1.0',
  kind: 'Atomic',
  description: 'Creates a webhook redirect endpoint (idempotent on endpoint_name)',
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
  outbound_url_fields: ['target_url'],
  failure_stamp: 'failed_at',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const created = await hooks.hookCreateRedirect({
        organization_uuid: ctx.organization_uuid,
        endpoint_name: d.endpoint_name ?? `redirect-${ctx.workflow_id}`,
        target_url: d.target_url,
        secret_ref: d.secret_ref,
      });
      return { patch: created };
    },
  },
});
