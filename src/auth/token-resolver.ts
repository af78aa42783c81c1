import { Inject, Injectable } from '@nestjs/common';
import type { DatabaseHandle } from '../../db/client';
import { CONFIG, DATABASE, IDENTITY } from '../common/di';
import type { AppConfig } from '../config';
import { EndUserTokenRejected, looksLikeJwt } from '../identity/end-user-tokens';
import type { Identity } from '../identity/identity';
import { resolveToken } from './org-tokens';
import type { Principal } from './principal';
import { TokenCache } from './token-cache';

/** A principal and the moment this process stops trusting that answer. */
export interface ResolvedPrincipal {
  principal: Principal;
  expiresAt: number;
}

/**
 * The API process's one token resolver: requests and open streams resolve bearer tokens through
 * it. Org-member tokens go through the token cache; end-user tokens (JWTs of the login host) are
 * verified each time, their session included, so a revoked session is refused at once.
 */
@Injectable()
export class TokenResolver {
  private readonly cache: TokenCache;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(IDENTITY) private readonly identity: Identity,
  ) {
    this.cache = new TokenCache(config.tokenCacheTtlMs);
  }

  async resolve(token: string): Promise<ResolvedPrincipal | undefined> {
    const verdict = await this.verdict(token);
    return 'rejected' in verdict ? undefined : verdict;
  }

  /** Like `resolve`, with why a token is refused. */
  async verdict(token: string): Promise<ResolvedPrincipal | { rejected: string }> {
    if (looksLikeJwt(token)) return this.endUser(token);
    const resolved = await this.cache.resolveUntil(token, (t) => resolveToken(this.database.db, t));
    if (!resolved) return { rejected: 'unknown or revoked token' };
    const { member, expiresAt } = resolved;
    return {
      principal: {
        user_id: member.token_id,
        organization_uuid: member.organization_uuid,
        username: member.username,
        token_type: 'org_member',
        principal_type: 'api_token',
      },
      expiresAt,
    };
  }

  private async endUser(token: string): Promise<ResolvedPrincipal | { rejected: string }> {
    try {
      const claims = await this.identity.tokens.verify(token);
      return {
        principal: {
          user_id: claims.sub,
          organization_uuid: claims.org,
          username: claims.email,
          token_type: 'end_user',
          principal_type: 'end_user',
          client_uuid: claims.app,
          client_key: claims.aud,
          sid: claims.sid,
        },
        // Streams re-verify (session included) as often as an org-member token is re-read, and at expiry.
        expiresAt: Math.min(Date.now() + this.config.tokenCacheTtlMs, claims.exp * 1000),
      };
    } catch (err) {
      if (err instanceof EndUserTokenRejected) return { rejected: err.message };
      throw err;
    }
  }
}

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header)?.[1] : undefined;
}
