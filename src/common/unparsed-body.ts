import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error';
import type { RawBodyRequest } from './raw-body';

/** The media types the JSON parser reads (src/api.ts). */
export const JSON_BODY_TYPES = ['application/json', 'application/*+json'];

/** What a route's body is when one was sent that no parser read. */
export const UNPARSED_BODY = Symbol('a body of another media type than JSON');

/**
 * Marks a body that no parser read (its Content-Type is not JSON): the routes that take a body
 * then answer 415 (SchemaValidationPipe) instead of telling the caller that the body it sent "is
 * required". Marked, not answered here: before routing, an unknown path would get 415, not 404.
 */
export function markUnparsedBody(req: Request, _res: Response, next: NextFunction): void {
  const sent = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (sent && !req.is(JSON_BODY_TYPES) && (req as RawBodyRequest).rawBody === undefined) req.body = UNPARSED_BODY;
  next();
}

export function refuseUnparsedBody(value: unknown): void {
  if (value === UNPARSED_BODY) {
    throw new ApiError(415, 'unsupported_media_type', 'a request body must be JSON: send it with Content-Type: application/json');
  }
}
