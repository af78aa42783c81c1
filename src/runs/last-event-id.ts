import { z } from 'zod';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { validationFailed } from '../common/api-error';

/** The largest seq the `transitions.seq` column (a Postgres integer) can hold. */
export const MAX_SEQ = 2_147_483_647;

export const LAST_EVENT_ID = 'Last-Event-ID';

/**
 * The stream's ids are seqs, so a Last-Event-ID is digits or nothing (empty: from the start).
 * Any number of digits is accepted: one beyond every seq the column can hold means "past the
 * end" (only the end event is left to send), instead of a query Postgres refuses.
 */
export const lastEventIdSchema = z
  .string()
  .regex(/^[0-9]*$/, 'must be the id of an event this stream sent: digits only')
  .transform((raw) => (raw === '' ? 0 : Math.min(Number(raw), MAX_SEQ)));

/** The seq a stream resumes after; a 422 naming the header for anything else. */
export function parseLastEventId(raw: string | undefined): number {
  const parsed = lastEventIdSchema.safeParse(raw ?? '');
  if (!parsed.success) throw validationFailed(fieldProblems(parsed.error, raw, LAST_EVENT_ID));
  return parsed.data;
}
