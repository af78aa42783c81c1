import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { runs } from '../../db/schema';
import { validationFailed } from '../common/api-error';
import { runView } from './run-views';

export const listQuerySchema = z.strictObject({
  workflow_type: z.string().min(1).max(200).optional(),
  status: z.enum(['RUNNING', 'COMPLETED', 'FAILED']).optional(),
  state_name: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

export type ListQuery = z.output<typeof listQuerySchema>;

/**
 * One page of an organization's runs, newest first, plus one row to tell whether another page
 * follows. The order and the cursor predicate match the runs_org_*_created_idx indexes exactly
 * (db/schema.ts): a page is read in order off the index of one of its filters, never sorted, so
 * its cost does not grow with what the organization holds (a second filter is checked row by row).
 */
export function listRunsQuery(db: Database, organizationUuid: string, q: ListQuery) {
  const filters = [eq(runs.organizationUuid, organizationUuid)];
  if (q.workflow_type) filters.push(eq(runs.workflowType, q.workflow_type));
  if (q.status) filters.push(eq(runs.status, q.status));
  if (q.state_name) filters.push(eq(runs.stateName, q.state_name.toLowerCase()));
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    // A row comparison is an index condition; the equivalent OR of two comparisons is only a
    // filter, which would read every row before the cursor again on each page.
    filters.push(sql`(${runs.createdAt}, ${runs.workflowId}) < (${c.createdAt.toISOString()}::timestamptz, ${c.workflowId})`);
  }
  return db
    .select()
    .from(runs)
    .where(and(...filters))
    .orderBy(desc(runs.createdAt), desc(runs.workflowId))
    .limit(q.limit + 1);
}

export async function listRuns(db: Database, organizationUuid: string, q: ListQuery) {
  const rows = await listRunsQuery(db, organizationUuid, q);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    runs: page.map(runView),
    next_cursor: rows.length > q.limit && last ? encodeCursor(last.createdAt, last.workflowId) : null,
  };
}

function encodeCursor(createdAt: Date, workflowId: string): string {
  return Buffer.from(`${createdAt.toISOString()}|${workflowId}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; workflowId: string } {
  const [iso, workflowId] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(iso);
  if (!workflowId || workflowId.includes('\0') || Number.isNaN(createdAt.getTime())) {
    throw validationFailed([{ field: 'cursor', rule: 'format', message: 'is not a cursor returned by this endpoint' }]);
  }
  return { createdAt, workflowId };
}
