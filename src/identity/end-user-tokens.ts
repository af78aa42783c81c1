import { randomBytes } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { compactVerify, errors, type JWTHeaderParameters, jwtVerify, SignJWT } from 'jose';
import type { Database } from '../../db/client';
import { identityApps, loginSessions, revokedTokens } from '../../db/schema';
import { SIGNING_ALG, type SigningKeys } from './signing-keys';

/** What an end-user access token says (README, End-user sign-in). */
export interface EndUserClaims {
  sub: string;
  aud: string;
  org: string;
  app: string;
  email: string;
  sid: string;
  jti: string;
  exp: number;
  token_type: 'end_user';
}

export interface IssueRequest {
  end_user_uuid: string;
  email: string;
  email_verified: boolean;
  organization_uuid: string;
  client_uuid: string;
  client_key: string;
  sid: string;
  /** Seconds since the epoch at which the login session's sign-in happened (OIDC Core §2). */
  auth_time: number;
  nonce?: string | null;
  /** Chosen beforehand, so the code that yields the token can record it before the token exists. */
  jti: string;
}

export const newJti = () => randomBytes(16).toString('base64url');

/** A JWT is three base64url parts; org-member tokens (wes_…) never contain a dot. */
export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);

export class EndUserTokenRejected extends Error {}

/** What an id_token_hint names: the user, the app it was issued to and its login session. */
export interface IdTokenHint {
  sub: string;
  aud: string;
  /** Absent from ID tokens issued before they carried it. */
  sid?: string;
}

/** An id_token_hint whose kid is no longer in the JWKS: perhaps genuine once, but nothing vouches for it now. */
export class UnknownSigningKey extends EndUserTokenRejected {}

/** Signs end-user access and ID tokens, and verifies access tokens presented to the API. */
export class EndUserTokens {
  constructor(
    private readonly db: Database,
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    readonly ttlSeconds: number,
  ) {}

  async issue(req: IssueRequest): Promise<{ access_token: string; id_token: string; expires_in: number }> {
    const { kid, key } = await this.keys.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.ttlSeconds;
    const header = { alg: SIGNING_ALG, kid, typ: 'JWT' };
    const access_token = await new SignJWT({
      org: req.organization_uuid,
      app: req.client_uuid,
      email: req.email,
      sid: req.sid,
      token_type: 'end_user',
    })
      .setProtectedHeader(header)
      .setIssuer(this.issuer)
      .setSubject(req.end_user_uuid)
      .setAudience(req.client_key)
      .setJti(req.jti)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(key);
    const id_token = await new SignJWT({
      email: req.email,
      email_verified: req.email_verified,
      auth_time: req.auth_time,
      // OIDC Front-Channel Logout §3: names the login session an id_token_hint asks to end.
      sid: req.sid,
      ...(req.nonce ? { nonce: req.nonce } : {}),
    })
      .setProtectedHeader(header)
      .setIssuer(this.issuer)
      .setSubject(req.end_user_uuid)
      .setAudience(req.client_key)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(key);
    return { access_token, id_token, expires_in: this.ttlSeconds };
  }

  /**
   * An access token the API may act on: RS256 by one of our keys (by kid), our issuer, not
   * expired, token_type end_user, its audience a provisioned app of the organization it names,
   * its session live and its jti not revoked. Anything else is EndUserTokenRejected.
   */
  async verify(token: string): Promise<EndUserClaims> {
    let claims: EndUserClaims;
    try {
      const { payload } = await jwtVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), {
        algorithms: [SIGNING_ALG],
        issuer: this.issuer,
        requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti', 'sid', 'org', 'app'],
      });
      claims = payload as unknown as EndUserClaims;
    } catch (err) {
      if (err instanceof errors.JOSEError) throw new EndUserTokenRejected(`end-user token rejected: ${err.code}`);
      throw err;
    }
    if (claims.token_type !== 'end_user' || typeof claims.aud !== 'string') {
      throw new EndUserTokenRejected('end-user token rejected: not an end-user access token');
    }
    const now = new Date();
    const [row] = await this.db
      .select({ sid: loginSessions.sid, revokedJti: revokedTokens.jti })
      .from(loginSessions)
      .innerJoin(
        identityApps,
        and(
          eq(identityApps.clientUuid, loginSessions.clientUuid),
          eq(identityApps.clientKey, claims.aud),
          eq(identityApps.organizationUuid, claims.org),
        ),
      )
      .leftJoin(revokedTokens, eq(revokedTokens.jti, claims.jti))
      .where(
        and(
          eq(loginSessions.sid, claims.sid),
          eq(loginSessions.endUserUuid, claims.sub),
          eq(loginSessions.clientUuid, claims.app),
          eq(loginSessions.organizationUuid, claims.org),
          isNull(loginSessions.revokedAt),
          gt(loginSessions.expiresAt, now),
        ),
      );
    if (!row) throw new EndUserTokenRejected('end-user token rejected: its app or its login session is gone or revoked');
    if (row.revokedJti) throw new EndUserTokenRejected('end-user token rejected: revoked');
    return claims;
  }

  /**
   * An ID token offered as id_token_hint (OIDC RP-Initiated Logout §2): RS256 by one of our keys,
   * our issuer, one audience, and an ID token rather than an access token. It may have expired: a
   * user signs out long after the last token was issued.
   */
  async verifyIdTokenHint(token: string): Promise<IdTokenHint> {
    let claims: Record<string, unknown>;
    try {
      const { payload } = await compactVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), { algorithms: [SIGNING_ALG] });
      claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) throw new UnknownSigningKey('must be signed by a key this login host still holds');
      if (err instanceof errors.JOSEError || err instanceof SyntaxError) throw new EndUserTokenRejected('must be an ID token signed by this login host');
      throw err;
    }
    if (claims === null || typeof claims !== 'object' || claims.iss !== this.issuer) throw new EndUserTokenRejected(`must be issued by ${this.issuer}`);
    if (claims.token_type !== undefined) throw new EndUserTokenRejected('must be an ID token, not an access token');
    const { sub, aud, sid } = claims;
    if (typeof sub !== 'string' || typeof aud !== 'string' || (sid !== undefined && typeof sid !== 'string')) {
      throw new EndUserTokenRejected('must name sub and one aud');
    }
    return { sub, aud, sid };
  }

  private async keyFor(header: JWTHeaderParameters) {
    if (header.alg !== SIGNING_ALG || typeof header.kid !== 'string') throw new errors.JWSSignatureVerificationFailed();
    const key = await this.keys.verificationKey(header.kid);
    if (!key) throw new errors.JWKSNoMatchingKey();
    return key;
  }
}
