import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { type ThrottlerOptions, ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import { AuthModule } from '../auth/auth.module';
import { type EndUserPrincipal, isEndUser, type Principal } from '../auth/principal';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { AccessGuard, ingressEndpoint } from './access.guard';
import { type RequestKind, requestKind } from './request-limit';

type Authed = Request & { principal: Principal };

const MINUTE_MS = 60_000;

// Starting work costs more than reading it: starts and retries have their own, lower limits (the
// handlers marked @RequestLimit). The webhook ingress carries no token: it is limited per endpoint.
function throttler(
  name: string,
  limit: number,
  kind: RequestKind,
  track: (req: Request) => string,
  counts: (req: Request) => boolean = () => true,
): ThrottlerOptions {
  return {
    name,
    ttl: MINUTE_MS,
    limit,
    skipIf: (context) => limit === 0 || requestKind(context) !== kind || !counts(context.switchToHttp().getRequest()),
    getTracker: (req) => track(req as Request),
  };
}

const principal = (req: Request) => (req as Authed).principal;
// Anyone may register as an end user of an app: their requests share a budget per app, so that
// they cannot spend the organization members' share.
const member = (req: Request) => !isEndUser(principal(req));
const endUser = (req: Request) => isEndUser(principal(req));
const app = (req: Request) => (principal(req) as EndUserPrincipal).client_uuid;

@Module({
  imports: [
    AuthModule,
    ThrottlerModule.forRootAsync({
      inject: [CONFIG],
      useFactory: ({ limits }: AppConfig) => ({
        throttlers: [
          throttler('starts-org', limits.startsPerMinuteOrg, 'start', (req) => principal(req).organization_uuid, member),
          throttler('starts-app', limits.startsPerMinuteApp, 'start', app, endUser),
          throttler('starts-token', limits.startsPerMinuteToken, 'start', (req) => principal(req).user_id),
          throttler('reads-org', limits.readsPerMinuteOrg, 'read', (req) => principal(req).organization_uuid, member),
          throttler('reads-app', limits.readsPerMinuteApp, 'read', app, endUser),
          throttler('reads-token', limits.readsPerMinuteToken, 'read', (req) => principal(req).user_id),
          throttler('ingress-endpoint', limits.ingressPerMinuteEndpoint, 'ingress', (req) => ingressEndpoint(req.params)),
        ],
        generateKey: (_context, tracker, name) => `${name}:${tracker}`,
      }),
    }),
  ],
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class LimitsModule {}
