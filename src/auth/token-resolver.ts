import { Inject, Injectable } from '@nestjs/common';
import type { DatabaseHandle } from '../../db/client';
import { CONFIG, DATABASE } from '../common/di';
import type { AppConfig } from '../config';
import { resolveToken } from './org-tokens';
import { type Resolved, TokenCache } from './token-cache';

/** The API process's one token cache: requests and open streams resolve bearer tokens through it. */
@Injectable()
export class TokenResolver {
  private readonly cache: TokenCache;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) config: AppConfig,
  ) {
    this.cache = new TokenCache(config.tokenCacheTtlMs);
  }

  resolve(token: string): Promise<Resolved | undefined> {
    return this.cache.resolveUntil(token, (t) => resolveToken(this.database.db, t));
  }
}

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header)?.[1] : undefined;
}
