import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { parse as parseCookies, serialize } from 'cookie';
import type { IncomingMessage } from 'node:http';
import type { Database } from '../../db/client';
import { loginSessions } from '../../db/schema';

/**
 * Login sessions on the login host: a server-side row per session (so it can be revoked) behind
 * an HttpOnly cookie. The cookie holds a 256-bit secret; the row and the tokens carry only its
 * sha256, the public session id (`sid`), so that a token never lets anyone forge the cookie.
 * This is the start of the cookie's name on an http login host (development); see LoginSessionCookie.
 */
export const SESSION_COOKIE = 'wes_login';

/**
 * The session cookies of one login host, one per app (`wes_login_<client_uuid>`): a session
 * belongs to one app, and with one cookie for all, signing in to a second app would end the
 * first one's session in that browser (its silent renewals would answer login_required). On
 * https the names are `__Host-` prefixed, as the CSRF cookie (src/accounts/csrf.ts): browsers
 * accept such a cookie only Secure, host-only and on Path=/, so a sibling subdomain cannot plant
 * its own session on the login host (login fixation).
 */
export class LoginSessionCookie {
  private readonly secure: boolean;

  constructor(loginUrl: string) {
    this.secure = new URL(loginUrl).protocol === 'https:';
  }

  /** A client_uuid is a UUID, so the name holds only characters a cookie name may. */
  name(clientUuid: string): string {
    return `${this.secure ? '__Host-' : ''}${SESSION_COOKIE}_${clientUuid}`;
  }

  /** The Set-Cookie value for a session of this app. */
  serialize(clientUuid: string, secret: string, expiresAt: Date): string {
    return serialize(this.name(clientUuid), secret, { httpOnly: true, secure: this.secure, sameSite: 'lax', path: '/', expires: expiresAt });
  }

  /** The Set-Cookie that removes this app's session cookie (same attributes, or a `__Host-` cookie is not replaced). */
  clear(clientUuid: string): string {
    return this.serialize(clientUuid, '', new Date(0));
  }
}

const DEFAULT_TTL_S = 7 * 24 * 3600;

export const sessionIdOf = (secret: string) => createHash('sha256').update(secret).digest('base64url');

export interface LoginSessionRef {
  end_user_uuid: string;
  client_uuid: string;
  organization_uuid: string;
}

export interface LoginSession extends LoginSessionRef {
  /** The public session id: the `sid` claim of the tokens it yields. */
  sid: string;
  /** When the user signed in: a session starts at a sign-in and is never extended (the ID token's auth_time). */
  auth_time: Date;
  expires_at: Date;
}

/**
 * Starts a session; `sid` here is the cookie's secret (pass it to `LoginSessionCookie.serialize`),
 * never shown anywhere else. The session's public id is `sessionIdOf(sid)`.
 */
export async function createLoginSession(
  db: Database,
  ref: LoginSessionRef,
  ttlSeconds = DEFAULT_TTL_S,
): Promise<{ sid: string; expires_at: Date }> {
  const secret = 'ls_' + randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await db.insert(loginSessions).values({
    sid: sessionIdOf(secret),
    endUserUuid: ref.end_user_uuid,
    clientUuid: ref.client_uuid,
    organizationUuid: ref.organization_uuid,
    expiresAt,
  });
  return { sid: secret, expires_at: expiresAt };
}

/** The live session the request's cookie names, for this app; undefined when none. */
export async function currentLoginSession(
  db: Database,
  req: IncomingMessage,
  clientUuid: string,
  cookie: LoginSessionCookie,
): Promise<LoginSession | undefined> {
  const secret = parseCookies(req.headers.cookie ?? '')[cookie.name(clientUuid)];
  if (!secret || !secret.startsWith('ls_') || secret.length > 100) return undefined;
  return liveSession(db, sessionIdOf(secret), clientUuid);
}

/** A session by its public id, if it is neither revoked nor expired (and of that app, when given). */
export async function liveSession(db: Database, sid: string, clientUuid?: string): Promise<LoginSession | undefined> {
  const filters = [eq(loginSessions.sid, sid), isNull(loginSessions.revokedAt), gt(loginSessions.expiresAt, new Date())];
  if (clientUuid) filters.push(eq(loginSessions.clientUuid, clientUuid));
  const [row] = await db.select().from(loginSessions).where(and(...filters));
  return (
    row && {
      sid: row.sid,
      end_user_uuid: row.endUserUuid,
      client_uuid: row.clientUuid,
      organization_uuid: row.organizationUuid,
      auth_time: row.createdAt,
      expires_at: row.expiresAt,
    }
  );
}

/**
 * Revokes one session (by public id) or every session of an end user, within an organization;
 * returns the public ids revoked. Tokens of a revoked session are refused from then on.
 */
export async function revokeLoginSession(
  db: Database,
  target:
    | { organization_uuid: string; sid: string; end_user_uuid?: string; client_uuid?: string }
    | { organization_uuid: string; end_user_uuid: string; client_uuid?: string; all: true },
): Promise<string[]> {
  const filters = [eq(loginSessions.organizationUuid, target.organization_uuid), isNull(loginSessions.revokedAt)];
  if ('sid' in target) filters.push(eq(loginSessions.sid, target.sid));
  if (target.end_user_uuid) filters.push(eq(loginSessions.endUserUuid, target.end_user_uuid));
  if (target.client_uuid) filters.push(eq(loginSessions.clientUuid, target.client_uuid));
  const rows = await db
    .update(loginSessions)
    .set({ revokedAt: new Date() })
    .where(and(...filters))
    .returning({ sid: loginSessions.sid });
  return rows.map((r) => r.sid);
}
