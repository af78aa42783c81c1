import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import pinoHttp from 'pino-http';
import { absolutePath as swaggerUiAssets } from 'swagger-ui-dist';
import { AppModule, type AppDependencies } from './app.module';
import { bodyParserErrors } from './common/error.filter';
import { methodNotAllowed } from './common/method-not-allowed';
import { NestPinoLogger } from './nest-logger';
import { buildOpenApiDocument } from './openapi/document';

/** Builds the HTTP API (not yet listening). */
export async function createApi(deps: AppDependencies): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(deps), {
    logger: new NestPinoLogger(deps.logger),
    bodyParser: false,
  });
  app.setGlobalPrefix('api');
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(
    pinoHttp({
      logger: deps.logger,
      customProps: (req) => ({ organization_uuid: (req as { principal?: { organization_uuid: string } }).principal?.organization_uuid }),
      serializers: {
        req: (req) => ({ method: req.method, url: req.url }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(methodNotAllowed(buildOpenApiDocument()));
  app.use(json({ limit: deps.config.bodyLimitBytes, type: ['application/json', 'application/*+json'] }));
  app.use(bodyParserErrors);
  app.useStaticAssets(swaggerUiAssets(), { prefix: '/api/docs/assets' });
  return app;
}
