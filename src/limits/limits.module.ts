import { type ExecutionContext, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { type ThrottlerOptions, ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import { AuthModule } from '../auth/auth.module';
import type { Principal } from '../auth/principal';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { AccessGuard } from './access.guard';

type Authed = Request & { principal: Principal };

const MINUTE_MS = 60_000;

/** Starting work costs more than reading it: starts and retries have their own, lower limits. */
function isStart(context: ExecutionContext): boolean {
  const req = context.switchToHttp().getRequest<Request>();
  return req.method === 'POST' && /^\/api\/workflows\/(start|[^/]+\/retry)$/.test(req.path);
}

function throttler(name: string, limit: number, starts: boolean, track: (p: Principal) => string): ThrottlerOptions {
  return {
    name,
    ttl: MINUTE_MS,
    limit,
    skipIf: (context) => limit === 0 || isStart(context) !== starts,
    getTracker: (req) => track((req as Authed).principal),
  };
}

@Module({
  imports: [
    AuthModule,
    ThrottlerModule.forRootAsync({
      inject: [CONFIG],
      useFactory: ({ limits }: AppConfig) => ({
        throttlers: [
          throttler('starts-org', limits.startsPerMinuteOrg, true, (p) => p.organization_uuid),
          throttler('starts-token', limits.startsPerMinuteToken, true, (p) => p.user_id),
          throttler('reads-org', limits.readsPerMinuteOrg, false, (p) => p.organization_uuid),
          throttler('reads-token', limits.readsPerMinuteToken, false, (p) => p.user_id),
        ],
        generateKey: (_context, tracker, name) => `${name}:${tracker}`,
      }),
    }),
  ],
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class LimitsModule {}
