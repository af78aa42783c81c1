import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express, { json } from 'express';
import pinoHttp from 'pino-http';
import { absolutePath as swaggerUiAssets } from 'swagger-ui-dist';
import { AppModule, type AppDependencies } from './app.module';
import { bodyParserErrors } from './common/error.filter';
import { requestRoute } from './common/request-route';
import { appCors } from './identity/app-cors';
import { bodyDepthLimit } from './limits/body-depth';
import { methodNotAllowed } from './common/method-not-allowed';
import { NestPinoLogger } from './nest-logger';
import { httpSpans } from './telemetry/http-spans';
import { openApiDocument } from './openapi/document';
import { rawBody } from './common/raw-body';
import { JSON_BODY_TYPES, markUnparsedBody } from './common/unparsed-body';

/** Added when the response is done: routing has matched by then (the `req` serializer runs at the request's start). */
const withRouteAndOrganization = (req: IncomingMessage, line: object) => ({
  ...line,
  route: requestRoute(req),
  organization_uuid: (req as { principal?: { organization_uuid: string } }).principal?.organization_uuid,
});

/** Builds the HTTP API (not yet listening). */
export async function createApi(deps: AppDependencies): Promise<INestApplication> {
  // Paths are case-sensitive (RFC 3986), as the OpenAPI document, the 405 check and every path
  // compared in the middleware take them; set before Express builds its router, which reads it once.
  const instance = express().set('case sensitive routing', true);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(deps), new ExpressAdapter(instance), {
    logger: new NestPinoLogger(deps.logger),
    bodyParser: false,
  });
  // The MCP endpoint is on the API's origin but not part of the REST surface under /api.
  app.setGlobalPrefix('api', { exclude: ['mcp'] });
  app.disable('x-powered-by');
  if (deps.config.trustProxy !== undefined) app.set('trust proxy', deps.config.trustProxy);
  if (deps.config.tracing) app.use(httpSpans);
  app.set('query parser', 'simple');
  app.use(
    pinoHttp({
      logger: deps.logger,
      // Added to the one line logged per request; customProps would build child loggers for it
      // (three per request), a cost every request pays.
      customSuccessObject: (req, _res, line) => withRouteAndOrganization(req, line),
      customErrorObject: (req, _res, _err, line) => withRouteAndOrganization(req, line),
      serializers: {
        // Never the URL: its path and query may carry tokens or other values.
        req: (req) => ({ method: req.method }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  // End users' browser apps (sdk/browser-auth), before the 405 check that would refuse their
  // preflights; the codec answers the Temporal UI's origins itself.
  app.use(appCors(deps.identity.appOrigins, (path) => path.startsWith('/api/temporal-codec')));
  app.use(methodNotAllowed(openApiDocument()));
  app.use(['/api/hooks/payments', '/api/hooks/r'], rawBody(deps.config.bodyLimitBytes));
  // Any JSON text parses (RFC 8259): a body of `null` or `"x"` is valid JSON that a route's schema
  // then refuses (422 naming (body)); strict parsing called it malformed.
  app.use(json({ limit: deps.config.bodyLimitBytes, type: JSON_BODY_TYPES, strict: false }));
  app.use(bodyParserErrors(new Set(['/api/auth/end-user/token'])));
  app.use('/api', markUnparsedBody);
  app.use(bodyDepthLimit(deps.config.limits.bodyMaxDepth));
  app.useStaticAssets(swaggerUiAssets(), { prefix: '/api/docs/assets' });
  return app;
}
