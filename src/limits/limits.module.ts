import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { type ThrottlerOptions, ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import { AuthModule } from '../auth/auth.module';
import type { Principal } from '../auth/principal';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { AccessGuard, ingressEndpoint } from './access.guard';
import { type RequestKind, requestKind } from './request-limit';

type Authed = Request & { principal: Principal };

const MINUTE_MS = 60_000;

// Starting work costs more than reading it: starts and retries have their own, lower limits (the
// handlers marked @RequestLimit). The webhook ingress carries no token: it is limited per endpoint.
function throttler(name: string, limit: number, kind: RequestKind, track: (req: Request) => string): ThrottlerOptions {
  return {
    name,
    ttl: MINUTE_MS,
    limit,
    skipIf: (context) => limit === 0 || requestKind(context) !== kind,
    getTracker: (req) => track(req as Request),
  };
}

const principal = (req: Request) => (req as Authed).principal;

@Module({
  imports: [
    AuthModule,
    ThrottlerModule.forRootAsync({
      inject: [CONFIG],
      useFactory: ({ limits }: AppConfig) => ({
        throttlers: [
          throttler('starts-org', limits.startsPerMinuteOrg, 'start', (req) => principal(req).organization_uuid),
          throttler('starts-token', limits.startsPerMinuteToken, 'start', (req) => principal(req).user_id),
          throttler('reads-org', limits.readsPerMinuteOrg, 'read', (req) => principal(req).organization_uuid),
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
