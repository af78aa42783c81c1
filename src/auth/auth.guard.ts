import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '../common/api-error';
import { IS_PUBLIC, type Principal } from './principal';
import { bearerToken, TokenResolver } from './token-resolver';

const unauthorized = (message: string) =>
  new ApiError(401, 'unauthorized', message, null, { 'WWW-Authenticate': 'Bearer' });

/** Resolves the bearer token to its organization on every request; the caller never names it. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenResolver,
  ) {}

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
    const token = bearerToken(header);
    if (!token) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
    const member = (await this.tokens.resolve(token))?.member;
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
