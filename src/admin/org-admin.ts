import type { Database } from '../../db/client';
import { createOrganization, createToken, revokeToken } from '../auth/org-tokens';
import type { Identity } from '../identity/identity';

/** The CLI's commands, run either directly on the database or through the running API's admin socket. */
export type AdminCommand =
  | { command: 'org.create'; name: string }
  | { command: 'token.create'; organization_uuid: string; username?: string }
  | { command: 'token.revoke'; token: string }
  | { command: 'keys.rotate' };

export async function runAdminCommand(db: Database, cmd: AdminCommand, identity?: Identity): Promise<Record<string, unknown>> {
  switch (cmd.command) {
    case 'org.create': {
      const created = await createOrganization(db, cmd.name);
      return { organization_uuid: created.organization_uuid, name: created.name, token_id: created.token_id, token: created.token };
    }
    case 'token.create':
      return { ...(await createToken(db, cmd.organization_uuid, cmd.username ?? 'cli')) };
    case 'token.revoke':
      return { revoked: await revokeToken(db, cmd.token) };
    case 'keys.rotate':
      if (!identity) throw new Error('keys rotate needs the master key (ENGINE_SECRET_KEY)');
      return { kid: await identity.keys.rotate() };
  }
}
