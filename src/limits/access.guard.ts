import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request } from 'express';
import { AuthGuard } from '../auth/auth.guard';
import type { Principal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { requestKind } from './request-limit';

/** The endpoint an ingress request posts to, as its route names it. */
export const ingressEndpoint = (params: Record<string, unknown>) => String(params.endpoint_uuid).toLowerCase();

/**
 * The one global guard: authenticate, then rate-limit by organization and by
 * token (windows counted in this API process). Public routes pass untouched,
 * but for the webhook ingress, limited per endpoint. The signed payments
 * ingress is limited by its handler (IngressLimiter), once it knows whether a
 * delivery verified.
 */
@Injectable()
export class AccessGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly auth: AuthGuard,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    await this.auth.canActivate(context);
    const req = context.switchToHttp().getRequest<Request & { principal?: Principal }>();
    if (!req.principal && requestKind(context) !== 'ingress') return true;
    return super.canActivate(context);
  }

  protected override async throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw rateLimited(detail);
  }
}

/** The 429 of every rate limit, the scope being the limit's name (keys are `<name>:<tracker>`). */
export function rateLimited(detail: Pick<ThrottlerLimitDetail, 'key' | 'limit' | 'ttl' | 'timeToBlockExpire'>): ApiError {
  const retryAfter = Math.max(1, Math.ceil(detail.timeToBlockExpire));
  const scope = detail.key.split(':')[0];
  return new ApiError(
    429,
    'rate_limited',
    `rate limit exceeded: ${detail.limit} requests per ${detail.ttl / 1000} s (${scope}); retry after ${retryAfter} s`,
    { scope, limit: detail.limit, window_seconds: detail.ttl / 1000, retry_after_seconds: retryAfter },
    { 'Retry-After': String(retryAfter), 'RateLimit-Limit': String(detail.limit), 'RateLimit-Remaining': '0' },
  );
}
