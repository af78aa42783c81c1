import { randomBytes, randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { identityApps } from '../db/schema';
import { revokeLoginSession } from '../src/identity/login-sessions';
import { integrationOf } from '../src/identity/integration';

export interface ProvisionedApp {
  client_key: string;
  client_uuid: string;
  name: string;
  redirect_uris: string[];
  integration: ReturnType<typeof integrationOf>;
}

/** The identity.* workflow types' database work (the worker runs these). */
export function createIdentityActivities(db: Database, loginUrl: string) {
  return {
    async provisionApp(req: { organization_uuid: string; name: string; redirect_uris: string[] }): Promise<ProvisionedApp> {
      const clientUuid = randomUUID();
      const clientKey = 'ck_' + randomBytes(16).toString('base64url');
      const redirectUris = [...new Set(req.redirect_uris)];
      await db.insert(identityApps).values({
        clientUuid,
        clientKey,
        organizationUuid: req.organization_uuid,
        name: req.name,
        redirectUris,
      });
      return {
        client_key: clientKey,
        client_uuid: clientUuid,
        name: req.name,
        redirect_uris: redirectUris,
        integration: integrationOf(loginUrl, clientKey, redirectUris[0]),
      };
    },

    async configureClient(req: {
      organization_uuid: string;
      client_key: string;
      add_redirect_uris: string[];
      remove_redirect_uris: string[];
    }): Promise<{ client_key: string; client_uuid: string; redirect_uris: string[] }> {
      return db.transaction(async (tx) => {
        const [app] = await tx
          .select()
          .from(identityApps)
          .where(and(eq(identityApps.clientKey, req.client_key), eq(identityApps.organizationUuid, req.organization_uuid)))
          .for('update');
        if (!app) throw ApplicationFailure.nonRetryable(`app ${req.client_key} not found`, 'not_found');
        const removed = new Set(req.remove_redirect_uris);
        const redirectUris = [...new Set([...app.redirectUris.filter((u) => !removed.has(u)), ...req.add_redirect_uris])];
        await tx.update(identityApps).set({ redirectUris, updatedAt: new Date() }).where(eq(identityApps.clientUuid, app.clientUuid));
        return { client_key: app.clientKey, client_uuid: app.clientUuid, redirect_uris: redirectUris };
      });
    },

    /** Revokes what the run names within its organization; a named session that is not live there is not_found. */
    async revokeSessions(req: { organization_uuid: string; sid?: string; end_user_uuid?: string; client_uuid?: string }): Promise<number> {
      const revoked = req.sid
        ? await revokeLoginSession(db, { organization_uuid: req.organization_uuid, sid: req.sid, end_user_uuid: req.end_user_uuid, client_uuid: req.client_uuid })
        : await revokeLoginSession(db, { organization_uuid: req.organization_uuid, end_user_uuid: req.end_user_uuid!, client_uuid: req.client_uuid, all: true });
      if (req.sid && !revoked.length) throw ApplicationFailure.nonRetryable(`session ${req.sid} not found`, 'not_found');
      return revoked.length;
    },
  };
}

export type IdentityActivities = ReturnType<typeof createIdentityActivities>;
