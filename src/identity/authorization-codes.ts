import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { authorizationCodes, endUsers, identityApps, revokedTokens } from '../../db/schema';
import type { EndUserTokens } from './end-user-tokens';
import { newJti } from './end-user-tokens';
import { isAppOrigin } from './apps';
import { liveSession } from './login-sessions';

const CODE_TTL_MS = 60_000;

/** RFC 7636 §4.1: 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** base64url(sha256(verifier)): 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** An RFC 6749 §5.2 error: `{error, error_description}` with 400. */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_client',
    readonly description: string,
  ) {
    super(description);
  }

  get body() {
    return { error: this.error, error_description: this.description };
  }
}

export interface CodeBinding {
  client_uuid: string;
  redirect_uri: string;
  code_challenge: string;
  /** The login session's public id. */
  sid: string;
  end_user_uuid: string;
  nonce?: string;
}

/** A single-use code (256 bits) for 60 s, bound to app, redirect_uri, challenge and session; only its sha256 is stored. */
export async function issueCode(db: Database, binding: CodeBinding): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await db.insert(authorizationCodes).values({
    codeHash: hashCode(code),
    clientUuid: binding.client_uuid,
    redirectUri: binding.redirect_uri,
    codeChallenge: binding.code_challenge,
    sid: binding.sid,
    endUserUuid: binding.end_user_uuid,
    nonce: binding.nonce ?? null,
    expiresAt: new Date(Date.now() + CODE_TTL_MS),
  });
  return code;
}

export interface Redemption {
  code: string;
  code_verifier: string;
  /** The form endpoint's client_id and redirect_uri, which must match the code's (RFC 6749 §4.1.3). */
  client_key?: string;
  redirect_uri?: string;
  /** The Origin a browser sent: a page of another app must not redeem this app's codes. */
  origin?: string;
}

const invalidGrant = (why: string) => new OAuthError('invalid_grant', why);
/** Issued codes are 43 characters; anything much longer is no code and not worth hashing. */
const MAX_CODE_LENGTH = 200;

/**
 * Exchanges a code for tokens once. Every refusal is an OAuthError, and whoever answers it burns
 * the code (burnCode): a code gets one attempt, whatever its outcome.
 */
export async function redeemCode(db: Database, tokens: EndUserTokens, r: Redemption) {
  if (!CODE_VERIFIER.test(r.code_verifier)) {
    throw new OAuthError('invalid_request', 'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)');
  }
  if (r.code.length > MAX_CODE_LENGTH) throw invalidGrant('unknown, expired or already used code');
  const [row] = await db
    .select({ code: authorizationCodes, app: identityApps })
    .from(authorizationCodes)
    .innerJoin(identityApps, eq(identityApps.clientUuid, authorizationCodes.clientUuid))
    .where(eq(authorizationCodes.codeHash, hashCode(r.code)));
  if (!row || row.code.redeemedAt) throw invalidGrant('unknown, expired or already used code');
  const { code, app } = row;
  if (code.expiresAt.getTime() <= Date.now()) throw invalidGrant('unknown, expired or already used code');
  if (r.client_key !== undefined && r.client_key !== app.clientKey) throw invalidGrant('the code was issued to another client');
  if (r.origin !== undefined && !isAppOrigin(app, r.origin)) {
    throw new OAuthError('invalid_client', "the request's Origin is not that of a redirect URI registered for the code's app");
  }
  if (r.redirect_uri !== undefined && r.redirect_uri !== code.redirectUri) {
    throw invalidGrant('redirect_uri differs from the one the code was issued for');
  }
  if (s256(r.code_verifier) !== code.codeChallenge) throw invalidGrant('code_verifier does not match the code_challenge');
  const session = await liveSession(db, code.sid, app.clientUuid);
  if (!session || session.end_user_uuid !== code.endUserUuid) throw invalidGrant('the login session of this code has ended');
  const [user] = await db.select().from(endUsers).where(eq(endUsers.endUserUuid, code.endUserUuid));
  if (!user) throw invalidGrant('the account of this code is gone');

  const jti = newJti();
  const claimed = await db
    .update(authorizationCodes)
    .set({ redeemedAt: new Date(), issuedJtis: [jti] })
    .where(and(eq(authorizationCodes.codeHash, code.codeHash), isNull(authorizationCodes.redeemedAt)))
    .returning({ codeHash: authorizationCodes.codeHash });
  if (!claimed.length) throw invalidGrant('unknown, expired or already used code');
  return tokens.issue({
    end_user_uuid: user.endUserUuid,
    email: user.email,
    email_verified: Boolean(user.emailVerifiedAt),
    organization_uuid: app.organizationUuid,
    client_uuid: app.clientUuid,
    client_key: app.clientKey,
    sid: code.sid,
    auth_time: Math.floor(session.auth_time.getTime() / 1000),
    nonce: code.nonce,
    jti,
  });
}

/**
 * What a refused token request does to the code it names. An unused code is used up, so that
 * nobody can try code_verifiers, redirect URIs or clients against it until one fits; a code
 * already redeemed revokes the tokens it issued (RFC 6749 §4.1.2: presented again, it has leaked).
 */
export async function burnCode(db: Database, tokenTtlSeconds: number, presented: string): Promise<void> {
  if (presented.length > MAX_CODE_LENGTH) return;
  const codeHash = hashCode(presented);
  const used = await db
    .update(authorizationCodes)
    .set({ redeemedAt: new Date() })
    .where(and(eq(authorizationCodes.codeHash, codeHash), isNull(authorizationCodes.redeemedAt)))
    .returning({ codeHash: authorizationCodes.codeHash });
  if (used.length) return;
  const [code] = await db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, codeHash));
  if (code) await revokeIssued(db, code.issuedJtis, new Date(code.expiresAt.getTime() + tokenTtlSeconds * 1000));
}

/** Kept until the tokens would have expired anyway: they were issued before the code expired. */
async function revokeIssued(db: Database, jtis: string[], tokensExpireBy: Date) {
  for (const jti of jtis) await db.insert(revokedTokens).values({ jti, expiresAt: tokensExpireBy }).onConflictDoNothing();
}

/**
 * Forgets codes once a replay could no longer revoke anything (their tokens have expired), and
 * revocations of expired tokens.
 */
export async function pruneCodes(db: Database, tokenTtlSeconds: number) {
  await db.delete(authorizationCodes).where(lt(authorizationCodes.expiresAt, new Date(Date.now() - tokenTtlSeconds * 1000)));
  await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, new Date()));
}
