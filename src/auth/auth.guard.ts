import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { DatabaseHandle } from '../../db/client';
import { ApiError } from '../common/api-error';
import { CONFIG, DATABASE } from '../common/di';
import type { AppConfig } from '../config';
import { resolveToken } from './org-tokens';
import { IS_PUBLIC, type Principal } from './principal';
import { TokenCache } from './token-cache';

const unauthorized = (message: string) =>
  new ApiError(401, 'unauthorized', message, null, { 'WWW-Authenticate': 'Bearer' });

/** Resolves the bearer token to its organization on every request; the caller never names it. */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly tokens: TokenCache;

  constructor(
    private readonly reflector: Reflector,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) config: AppConfig,
  ) {
    this.tokens = new TokenCache(config.tokenCacheTtlMs);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest();
    req.principal = await this.authenticate(req.headers.authorization);
    return true;
  }

  /** The org member an Authorization header names; a 401 otherwise. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (!header) throw unauthorized('missing bearer token');
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
    if (!match) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
    const member = await this.tokens.resolve(match[1], (token) => resolveToken(this.database.db, token));
    if (!member) throw unauthorized('unknown or revoked token');
    return {
      user_id: member.token_id,
      organization_uuid: member.organization_uuid,
      username: member.username,
      token_type: 'org_member',
      principal_type: 'api_token',
    };
  }
}
