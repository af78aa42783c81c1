import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { entitlements } from '../../db/schema';
import { ApiError } from '../common/api-error';

export const entitlementQuerySchema = z.strictObject({
  subject: z.string().min(1).max(255).optional().describe('Only this subject (client_reference_id or customer_id of the payment)'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
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
    const c = decodeCursor(q.cursor);
    filters.push(sql`(${entitlements.grantedAt}, ${entitlements.entitlementUuid}) < (${c.grantedAt.toISOString()}::timestamptz, ${c.uuid})`);
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
    next_cursor: rows.length > q.limit && last ? Buffer.from(`${last.grantedAt.toISOString()}|${last.entitlementUuid}`).toString('base64url') : null,
  };
}

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** Only what listEntitlements wrote: a granted_at as toISOString gives it and an entitlement uuid. */
function decodeCursor(cursor: string): { grantedAt: Date; uuid: string } {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString());
  const grantedAt = new Date(match?.[1] ?? NaN);
  if (!match || Number.isNaN(grantedAt.getTime()) || grantedAt.toISOString() !== match[1]) {
    const message = 'is not a next_cursor returned by this endpoint';
    throw new ApiError(400, 'invalid_cursor', `cursor: ${message}`, [{ field: 'cursor', rule: 'invalid_cursor', message }]);
  }
  return { grantedAt, uuid: match[2] };
}
