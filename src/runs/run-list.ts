import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { runs } from '../../db/schema';
import { RUN_STATUSES } from '../../workflows/runtime/contract';
import { findUnstorableText } from '../../workflows/runtime/storable-text';
import { queryInteger } from '../common/query-integer';
import { decodeTimeCursor, encodeTimeCursor } from '../common/time-cursor';
import { runView } from './run-views';

export const listQuerySchema = z.strictObject({
  workflow_type: z.string().min(1).max(200).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  state_name: z.string().min(1).max(100).optional(),
  schedule_id: z.string().min(1).max(200).optional(),
  limit: queryInteger({ min: 1, max: 100, default: 20 }),
  cursor: z.string().max(200).optional(),
});

export type ListQuery = z.output<typeof listQuerySchema>;

/** An end user lists only the runs they started. */
export interface RunOwner {
  endUserUuid: string;
  clientUuid: string;
}

/**
 * One page of an organization's runs, newest first, plus one row to tell whether another page
 * follows. The order and the cursor predicate match the runs_org_*_created_idx indexes exactly
 * (db/schema.ts): a page is read in order off the index of one of its filters, never sorted, so
 * its cost does not grow with what the organization holds (a second filter is checked row by row).
 */
export function listRunsQuery(db: Database, organizationUuid: string, q: ListQuery, owner?: RunOwner) {
  const filters = [eq(runs.organizationUuid, organizationUuid)];
  if (owner) filters.push(eq(runs.endUserUuid, owner.endUserUuid), eq(runs.clientUuid, owner.clientUuid));
  if (q.workflow_type) filters.push(eq(runs.workflowType, q.workflow_type));
  if (q.status) filters.push(eq(runs.status, q.status));
  if (q.state_name) filters.push(eq(runs.stateName, q.state_name.toLowerCase()));
  if (q.schedule_id) filters.push(eq(runs.scheduleId, q.schedule_id));
  if (q.cursor) {
    const c = decodeTimeCursor(q.cursor, (id) => findUnstorableText(id) === undefined);
    // A row comparison is an index condition; the equivalent OR of two comparisons is only a
    // filter, which would read every row before the cursor again on each page.
    filters.push(sql`(${runs.createdAt}, ${runs.workflowId}) < (${c.at.toISOString()}::timestamptz, ${c.id})`);
  }
  return db
    .select()
    .from(runs)
    .where(and(...filters))
    .orderBy(desc(runs.createdAt), desc(runs.workflowId))
    .limit(q.limit + 1);
}

export async function listRuns(db: Database, organizationUuid: string, q: ListQuery, owner?: RunOwner) {
  const rows = await listRunsQuery(db, organizationUuid, q, owner);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    runs: page.map(runView),
    next_cursor: rows.length > q.limit && last ? encodeTimeCursor(last.createdAt, last.workflowId) : null,
  };
}

