import type { IncomingHttpHeaders } from 'node:http';

/** Headers kept with an event: what a receiver needs to interpret the body, never credentials or cookies. */
const KEPT_HEADERS = ['content-type', 'user-agent', 'idempotency-key', 'x-request-id', 'webhook-id', 'webhook-timestamp'];

export function keptHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(KEPT_HEADERS.flatMap((h) => (typeof headers[h] === 'string' ? [[h, headers[h] as string]] : [])));
}
