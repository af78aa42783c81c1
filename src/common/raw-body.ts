import type { NextFunction, Request, Response } from 'express';
import { raw } from 'express';

/** What a webhook sender may post to an ingress route: 1 MiB, or BODY_LIMIT_BYTES if an operator set less. */
export const INGRESS_BODY_LIMIT_BYTES = 1_048_576;

export type RawBodyRequest = Request & { rawBody?: Buffer };

/**
 * For the webhook ingress routes (a signature covers the exact bytes; the generic ingress stores
 * them as posted): keeps the body as received, whatever its content type, in `rawBody`, and refuses
 * a larger one unread (413). Mounted before the JSON parser, which then leaves the request alone,
 * so no JSON walk (depth limit, storable text) goes over the bytes.
 */
export function rawBody(bodyLimitBytes: number) {
  const parse = raw({ type: () => true, limit: Math.min(INGRESS_BODY_LIMIT_BYTES, bodyLimitBytes) });
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      (req as RawBodyRequest).rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      req.body = undefined;
      next();
    });
}
