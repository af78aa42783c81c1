import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json, urlencoded } from 'express';
import pinoHttp from 'pino-http';
import type { AppDependencies } from '../app.module';
import { bodyParserErrors } from '../common/error.filter';
import { NestPinoLogger } from '../nest-logger';
import { appCors } from './app-cors';
import { LoginHostModule } from './login-host.module';

/** Builds the login host (not yet listening): the second listener of the API process, on LOGIN_PORT. */
export async function createLoginHost(deps: AppDependencies): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(LoginHostModule.forRoot(deps), {
    logger: new NestPinoLogger(deps.logger),
    bodyParser: false,
  });
  app.disable('x-powered-by');
  if (deps.config.trustProxy !== undefined) app.set('trust proxy', deps.config.trustProxy);
  app.set('query parser', 'simple');
  app.use(
    pinoHttp({
      logger: deps.logger,
      customProps: () => ({ listener: 'login' }),
      // Never the URL: its query carries codes, states and challenges.
      serializers: { req: (req) => ({ method: req.method }), res: (res) => ({ statusCode: res.statusCode }) },
    }),
  );
  // The token endpoint, discovery and the JWKS are fetched by the apps' pages; the hosted pages are navigated to.
  app.use(appCors(deps.identity.appOrigins, (path) => !['/token', '/jwks', '/.well-known/openid-configuration'].includes(path)));
  app.use(urlencoded({ extended: false, limit: '64kb' }));
  app.use(json({ limit: '64kb' }));
  app.use(bodyParserErrors(new Set(['/token'])));
  return app;
}
