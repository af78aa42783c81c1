import type { NextFunction, Request, Response } from 'express';
import { raw } from 'express';

/** The ingress stores what a sender posted byte for byte, whatever its content type, up to 1 MiB (413 beyond). */
export const INGRESS_BODY_LIMIT_BYTES = 1_048_576;

export type IngressRequest = Request & { rawBody?: Buffer };

/**
 * Mounted on /api/hooks/r before the JSON parser: keeps the body as received in `rawBody`. The JSON
 * parser then leaves the request alone (the body is read), and nothing walks the bytes as JSON.
 */
export function ingressBody() {
  const parse = raw({ type: () => true, limit: INGRESS_BODY_LIMIT_BYTES });
  return (req: Request, res: Response, next: NextFunction) =>
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      (req as IngressRequest).rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      req.body = undefined;
      next();
    });
}
