import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from './api-error';
import { LOGGER } from './di';
import { loggableError } from './loggable-error';
import { requestRoute } from './request-route';
import { isDatabaseUnavailable, isTemporalUnavailable } from './unavailable';
import type { Logger } from '../logger';

const CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'unavailable',
};

interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
  message?: string;
}

/**
 * Body-parser failures happen before routing, where Nest would turn a JSON
 * syntax error into a generic 400: answer them here, in the same error shape.
 * `oauthPaths` are token endpoints, whose 400s are RFC 6749's `{error, error_description}`
 * (an OAuth client parses no other shape).
 */
export function bodyParserErrors(oauthPaths: ReadonlySet<string>) {
  return (err: BodyParserError, req: Request, res: Response, next: (err?: unknown) => void): void => {
    if (err?.type === 'entity.parse.failed' && oauthPaths.has(req.path)) {
      res.status(400).setHeader('Cache-Control', 'no-store').json({ error: 'invalid_request', error_description: 'request body is not valid JSON' });
    } else if (err?.type === 'entity.parse.failed') {
      res.status(400).json({ error: { code: 'malformed_json', message: 'request body is not valid JSON', details: null } });
    } else if (err?.type === 'entity.too.large') {
      res.status(413).json({ error: { code: 'payload_too_large', message: 'request body exceeds the size limit', details: null } });
    } else {
      next(err);
    }
  };
}

/** A dependency down: the client should come back, and Retry-After says when. */
const unavailable = (code: string, message: string) => ({
  status: 503,
  code,
  message,
  details: null,
  headers: { 'Retry-After': '5' } as Record<string, string>,
});

/** One error body everywhere: `{error: {code, message, details}}`. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    const { status, code, message, details, headers } = this.describe(exception);
    if (status >= 500) this.log.error({ err: loggableError(exception), method: req.method, route: requestRoute(req) }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status).json({ error: { code, message, details: details ?? null } });
  }

  private describe(exception: unknown) {
    if (exception instanceof ApiError) {
      return { status: exception.status, code: exception.code, message: exception.message, details: exception.details, headers: exception.headers };
    }
    const parserError = exception as BodyParserError;
    if (parserError?.type === 'entity.parse.failed') {
      return { status: 400, code: 'malformed_json', message: 'request body is not valid JSON', details: null, headers: {} };
    }
    if (parserError?.type === 'entity.too.large') {
      return { status: 413, code: 'payload_too_large', message: 'request body exceeds the size limit', details: null, headers: {} };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      const message = typeof body === 'string' ? body : ((body as { message?: string }).message ?? exception.message);
      return { status, code: CODES[status] ?? 'error', message: String(message), details: null, headers: {} };
    }
    if (isTemporalUnavailable(exception)) return unavailable('temporal_unavailable', 'Temporal is not answering; retry shortly');
    if (isDatabaseUnavailable(exception)) return unavailable('database_unavailable', 'the database is not answering; retry shortly');
    const status = parserError?.status ?? parserError?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return { status, code: CODES[status] ?? 'bad_request', message: parserError.message ?? 'bad request', details: null, headers: {} };
    }
    return { status: 500, code: 'internal_error', message: 'internal error', details: null, headers: {} };
  }
}
