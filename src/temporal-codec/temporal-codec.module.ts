import { Inject, Injectable, type MiddlewareConsumer, Module, type NestMiddleware, type NestModule, RequestMethod } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { CONFIG } from '../common/di';
import type { AppConfig } from '../config';
import { AuthModule } from '../auth/auth.module';
import { CodecCallerGuard } from './codec-caller.guard';
import { TemporalCodecController } from './temporal-codec.controller';

const ALLOWED_METHODS = 'POST, OPTIONS';
const ALLOWED_HEADERS = 'content-type, authorization, x-namespace';

/**
 * CORS for the Temporal UI, which calls the codec endpoint from its own origin
 * (TEMPORAL_UI_ORIGINS). It runs before the auth guard, so a preflight needs no
 * token and a 401 still carries the headers the browser needs to read it.
 */
@Injectable()
export class CodecCorsMiddleware implements NestMiddleware {
  private readonly origins: Set<string>;

  constructor(@Inject(CONFIG) config: AppConfig) {
    this.origins = new Set(config.temporalUiOrigins);
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    const allowed = typeof origin === 'string' && this.origins.has(origin);
    res.vary('Origin');
    if (allowed) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
    }
    if (req.method !== 'OPTIONS') return next();
    if (origin !== undefined && !allowed) {
      res.status(403).json({
        error: { code: 'origin_not_allowed', message: `origin ${origin} is not in TEMPORAL_UI_ORIGINS`, details: null },
      });
      return;
    }
    res.setHeader('Allow', ALLOWED_METHODS);
    res.status(204).end();
  }
}

@Module({ imports: [AuthModule], controllers: [TemporalCodecController], providers: [CodecCorsMiddleware, CodecCallerGuard] })
export class TemporalCodecModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(CodecCorsMiddleware).forRoutes({ path: 'temporal-codec/*path', method: RequestMethod.ALL });
  }
}
