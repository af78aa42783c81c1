import { ApiError } from './api-error';

/**
 * Keyset cursors of the lists read newest first: the last row's time and id, opaque to clients
 * (base64url). Runs and entitlements page with them.
 */
export function encodeTimeCursor(at: Date, id: string): string {
  return Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
}

/** What encodeTimeCursor writes: a time as toISOString gives it for years 0001 to 9999. */
const CURSOR_TIME = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Only what encodeTimeCursor could have written, with an id `isId` accepts: a forged time outside
 * the years Postgres and toISOString agree on (`-010000-…`, `+275760-…`, year 0) would otherwise
 * reach the query; anything else is a 400 invalid_cursor.
 */
export function decodeTimeCursor(cursor: string, isId: (id: string) => boolean): { at: Date; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString();
  const bar = text.indexOf('|');
  const iso = text.slice(0, bar);
  const id = text.slice(bar + 1);
  const at = new Date(iso);
  const isTime = CURSOR_TIME.test(iso) && !Number.isNaN(at.getTime()) && at.toISOString() === iso;
  if (bar < 0 || !isTime || !id || !isId(id)) {
    const message = 'is not a next_cursor returned by this endpoint';
    throw new ApiError(400, 'invalid_cursor', `cursor: ${message}`, [{ field: 'cursor', rule: 'invalid_cursor', message }]);
  }
  return { at, id };
}
