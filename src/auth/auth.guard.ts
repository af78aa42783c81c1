import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '../common/api-error';
import { invalidToken, isBearerAttempt, missingToken } from './bearer-challenge';
import { ALLOW_END_USERS, IS_PUBLIC, isEndUser, type Principal } from './principal';
import { bearerToken, TokenResolver } from './token-resolver';

/** The 403 an end-user token gets on a route for organization members. */
export function requireOrgMember(principal: Principal): void {
  if (isEndUser(principal)) {
    throw new ApiError(403, 'end_user_forbidden', 'this route is for organization members; an end-user token cannot use it');
  }
}

/** Resolves the bearer token (org member or end user) on every request; the caller never names the organization. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest();
    req.principal = await this.authenticate(req.headers.authorization);
    if (!this.reflector.getAllAndOverride<boolean>(ALLOW_END_USERS, targets)) requireOrgMember(req.principal);
    return true;
  }

  /** The principal an Authorization header names; a 401 otherwise. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (!header) throw missingToken('missing bearer token');
    const token = bearerToken(header);
    if (!token) {
      const message = 'malformed Authorization header: expected "Bearer <token>"';
      throw isBearerAttempt(header) ? invalidToken(message) : missingToken(message);
    }
    const verdict = await this.tokens.verdict(token);
    if ('rejected' in verdict) throw invalidToken(verdict.rejected);
    return verdict.principal;
  }
}
