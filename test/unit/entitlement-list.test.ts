import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client';
import { entitlements } from '../../db/schema';
import { listEntitlements } from '../../src/entitlements/entitlement-list';
import { openMigratedPglite } from '../support/pglite';

/**
 * Paging newest first by (granted_at, entitlement_uuid): the cursor carries milliseconds, so
 * rows granted within one millisecond (concurrent grants on Postgres) must all be reached.
 */
describe('listEntitlements paging', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  it('reaches every row granted within one millisecond, each once, one per page', async () => {
    const org = 'org_paging';
    for (const [i, at] of ['2026-11-25 10:00:00.1231+00', '2026-11-25 10:00:00.1235+00', '2026-11-25 10:00:00.1239+00'].entries()) {
      await database.db.insert(entitlements).values({
        entitlementUuid: randomUUID(),
        organizationUuid: org,
        subject: 'alice',
        sourceEventId: `evt_${i}`,
        workflowId: `wf_${i}`,
        eventType: 'checkout.session.completed',
        grantedAt: sql`${at}::timestamptz`,
      });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listEntitlements(database.db, org, { limit: 1, cursor });
      seen.push(...page.entitlements.map((e) => e.source_event_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor && seen.length < 10);
    expect(seen.sort()).toEqual(['evt_0', 'evt_1', 'evt_2']);
  });
});
