import type { Response } from 'express';
import { CONTENT_SECURITY_POLICY } from './html';

/** Every hosted page: no framing, no caching (they carry tokens and personal data), no referrer leaking a link's token. */
export function sendPage(res: Response, status: number, body: string, headers: Record<string, string> = {}): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
      ...headers,
    })
    .send(body);
}
