import { asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { identityApps } from '../../db/schema';

export type IdentityApp = typeof identityApps.$inferSelect;

export async function appByClientKey(db: Database, clientKey: string): Promise<IdentityApp | undefined> {
  if (!/^ck_[A-Za-z0-9_-]{1,100}$/.test(clientKey)) return undefined;
  const [app] = await db.select().from(identityApps).where(eq(identityApps.clientKey, clientKey));
  return app;
}

export async function appsOf(db: Database, organizationUuid: string): Promise<IdentityApp[]> {
  return db.select().from(identityApps).where(eq(identityApps.organizationUuid, organizationUuid)).orderBy(asc(identityApps.createdAt));
}

/** Exact string equality with a registered URI: no prefix, wildcard, case or trailing-slash leniency. */
export const isRegisteredRedirect = (app: IdentityApp, redirectUri: string) => app.redirectUris.includes(redirectUri);

/**
 * Whether a browser request's Origin is that of one of the app's redirect URIs: where its pages
 * run. CORS admits the origins of every app (a preflight names no client); a token request is
 * held to its own app's.
 */
export const isAppOrigin = (app: IdentityApp, origin: string) => app.redirectUris.some((uri) => new URL(uri).origin === origin);

/**
 * Where a page may send a user back to the app: `given` when it is registered, else a registered
 * URI on its origin, else the app's first. Never `given` itself unregistered: nothing vouches for it.
 */
export function appReturnUri(app: IdentityApp, given?: string): string | undefined {
  if (given !== undefined && isRegisteredRedirect(app, given)) return given;
  const origin = URL.parse(given ?? '')?.origin;
  return app.redirectUris.find((uri) => new URL(uri).origin === origin) ?? app.redirectUris[0];
}

export const appView = (app: IdentityApp) => ({
  client_key: app.clientKey,
  client_uuid: app.clientUuid,
  name: app.name,
  redirect_uris: app.redirectUris,
  created_at: app.createdAt.toISOString(),
  updated_at: app.updatedAt.toISOString(),
});
