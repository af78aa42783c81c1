import type { NextFunction, Request, Response } from 'express';
import { raw } from 'express';

/** The provider's limit on what it signs is far below this; a larger body is refused unread (413). */
export const HOOK_BODY_LIMIT_BYTES = 1_048_576;

export const HOOKS_PATH = '/api/hooks/payments';

export type HookRequest = Request & { rawBody?: Buffer };

/**
 * The signature covers the body's exact bytes, so the hook routes keep them, whatever the content
 * type, as `rawBody`: mounted before the JSON parser, which then leaves the request alone, and with
 * no parsed body for the JSON walks that follow (depth limit, storable text) to go over.
 */
export const rawHookBody = [
  raw({ type: () => true, limit: HOOK_BODY_LIMIT_BYTES }),
  (req: HookRequest, _res: Response, next: NextFunction) => {
    req.rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    req.body = undefined;
    next();
  },
];
