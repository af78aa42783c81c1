import { createHash, randomBytes } from 'node:crypto';
import { RUN_ID_PREFIX } from '../../workflows/constants';

/** wf_ + a time prefix (so ids sort roughly by creation) + 80 random bits. */
export function newRunId(): string {
  return RUN_ID_PREFIX + Date.now().toString(36).padStart(10, '0') + randomBytes(10).toString('hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Same body, same hash, whatever the key order: what an Idempotency-Key is compared on. */
export const requestHash = (body: unknown) => createHash('sha256').update(canonical(body)).digest('hex');
