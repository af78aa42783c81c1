import { createHash, randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { identityApps } from '../db/schema';
import { revokeLoginSession } from '../src/identity/login-sessions';
import { integrationOf, type IntegrationUrls } from '../src/identity/integration';

export interface ProvisionedApp {
  client_key: string;
  client_uuid: string;
  name: string;
  redirect_uris: string[];
  integration: ReturnType<typeof integrationOf>;
}

/** The identity.* workflow types' database work (the worker runs these). */
export function createIdentityActivities(db: Database, urls: IntegrationUrls) {
  return {
    /**
     * One app per provision_key (the run's id): an attempt retried after its insert committed (a
     * lost answer, a worker gone) answers with the app the first one created instead of a second app.
     */
    async provisionApp(req: { organization_uuid: string; provision_key: string; name: string; redirect_uris: string[] }): Promise<ProvisionedApp> {
      const clientUuid = keyedUuid(`identity.app:${req.organization_uuid}:${req.provision_key}`);
      await db
        .insert(identityApps)
        .values({
          clientUuid,
          clientKey: 'ck_' + randomBytes(16).toString('base64url'),
          organizationUuid: req.organization_uuid,
          name: req.name,
          redirectUris: [...new Set(req.redirect_uris)],
        })
        .onConflictDoNothing({ target: identityApps.clientUuid });
      const [app] = await db
        .select()
        .from(identityApps)
        .where(and(eq(identityApps.clientUuid, clientUuid), eq(identityApps.organizationUuid, req.organization_uuid)));
      return {
        client_key: app.clientKey,
        client_uuid: app.clientUuid,
        name: app.name,
        redirect_uris: app.redirectUris,
        integration: integrationOf(urls, app.clientKey, app.redirectUris[0]),
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

/** A UUID (RFC 9562 version 8, name-based) that is the same for the same name. */
function keyedUuid(name: string): string {
  const b = createHash('sha256').update(name).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
