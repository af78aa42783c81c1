import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { entitlements } from '../../db/schema';
import { queryInteger } from '../common/query-integer';
import { decodeTimeCursor, encodeTimeCursor } from '../common/time-cursor';
import { canonicalUuid } from '../common/uuid';

export const entitlementQuerySchema = z.strictObject({
  subject: z.string().min(1).max(255).optional().describe('Only this subject (client_reference_id or customer_id of the payment)'),
  limit: queryInteger({ min: 1, max: 100, default: 20 }),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
});

export type EntitlementQuery = z.output<typeof entitlementQuerySchema>;

type EntitlementRow = typeof entitlements.$inferSelect;

export const entitlementView = (row: EntitlementRow) => ({
  entitlement_uuid: row.entitlementUuid,
  subject: row.subject,
  source_event_id: row.sourceEventId,
  event_type: row.eventType,
  object_id: row.objectId,
  event_metadata: row.eventMetadata as Record<string, unknown>,
  workflow_id: row.workflowId,
  granted_at: row.grantedAt.toISOString(),
});

/** One page, newest first, read in the order of the entitlements_org_*granted_idx indexes (db/schema.ts). */
export async function listEntitlements(db: Database, organizationUuid: string, q: EntitlementQuery) {
  const filters = [eq(entitlements.organizationUuid, organizationUuid)];
  if (q.subject) filters.push(eq(entitlements.subject, q.subject));
  if (q.cursor) {
    const c = decodeTimeCursor(q.cursor, (id) => canonicalUuid(id) === id);
    filters.push(sql`(${entitlements.grantedAt}, ${entitlements.entitlementUuid}) < (${c.at.toISOString()}::timestamptz, ${c.id})`);
  }
  const rows = await db
    .select()
    .from(entitlements)
    .where(and(...filters))
    .orderBy(desc(entitlements.grantedAt), desc(entitlements.entitlementUuid))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    entitlements: page.map(entitlementView),
    next_cursor: rows.length > q.limit && last ? encodeTimeCursor(last.grantedAt, last.entitlementUuid) : null,
  };
}
