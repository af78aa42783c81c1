import { z } from 'zod';
import { identity } from './identity/common';
import { ANY_STATE, defineWorkflow, failureFields } from './runtime/definition';

const sid = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a session id (the sid claim of an end-user token)');
const endUserUuid = z.string().min(1).max(100);

/**
 * Started by an end user, end_user_uuid and client_uuid are pinned by the engine to that user's
 * own, so an end user can revoke only their own sessions ("sign out everywhere" is `{all: true}`).
 */
const input = z
  .strictObject({
    sid: sid.optional().describe('The session to revoke'),
    end_user_uuid: endUserUuid.optional().describe('With all: every session of this end user'),
    all: z.literal(true).optional(),
    client_uuid: z.string().max(100).optional().describe('Set by the engine when an end user starts the run'),
  })
  .refine((d) => (d.sid === undefined) !== (d.all === undefined), { message: 'give either sid or all: true', path: ['sid'] })
  .refine((d) => !d.all || d.end_user_uuid, { message: 'all: true needs end_user_uuid', path: ['end_user_uuid'] });

const output = z.object({
  sid: z.string().optional(),
  end_user_uuid: z.string().optional(),
  all: z.boolean().optional(),
  client_uuid: z.string().optional(),
  revoked_sessions: z.number().int().optional().describe('How many live sessions were revoked'),
  ...failureFields,
});

/** Revokes login sessions: their tokens are refused by the API and prompt=none answers login_required. */
export const endUserSessionRevoke = defineWorkflow({
  workflow_type: 'identity.end-user.session.revoke',
  version: '1.0',
  kind: 'Atomic',
  description: "Revokes an end user's login session, or all of them (sign out everywhere)",
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
  exposed_to_end_users: true,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_at',
  actions: {
    async execute(data, ctx) {
      const d = data as z.output<typeof input>;
      const revoked = await identity.revokeSessions({
        organization_uuid: ctx.organization_uuid,
        sid: d.sid,
        end_user_uuid: d.end_user_uuid,
        client_uuid: d.client_uuid,
      });
      return { patch: { revoked_sessions: revoked } };
    },
  },
});
