import { sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { runs } from '../../db/schema';
import { ApiError } from '../../src/common/api-error';
import { type ListQuery, listQuerySchema, listRuns, listRunsQuery } from '../../src/runs/run-list';
import { createTestDatabase } from '../support/test-database';

const ORG = 'org_list';
const TIES = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
// PGlite and node-postgres both answer raw statements with { rows }.
const rowsOf = (result: unknown) => (result as { rows: Array<Record<string, string>> }).rows;

// On PGlite always; on Postgres too when DATABASE_URL is set, since the plans are the point.
const engines: Array<[string, () => Promise<{ database: DatabaseHandle; drop(): Promise<void> }>]> = [
  ['PGlite', async () => ({ database: await openDatabase({}), drop: async () => undefined })],
];
if (process.env.DATABASE_URL) {
  engines.push([
    'Postgres',
    async () => {
      const created = await createTestDatabase(process.env.DATABASE_URL!);
      return { database: await openDatabase({ databaseUrl: created.url, poolSize: 1 }), drop: created.drop };
    },
  ]);
}

describe.each(engines)('listing runs on %s', (_, open) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ database, drop } = await open());
    await database.migrate();
    // Five runs share one created_at, with ids out of insertion order; the others are one to four
    // seconds older or newer. Another organization's runs, all at the tied time, must never show.
    const row = (workflowId: string, organizationUuid: string, createdAt: Date, i: number) => ({
      workflowId,
      organizationUuid,
      workflowType: i % 2 ? 'type.odd' : 'type.even',
      version: '1.0',
      stateName: i % 3 ? 'completed' : 'failed',
      status: i % 3 ? 'COMPLETED' : 'FAILED',
      isTerminal: true,
      scheduleId: i % 4 ? null : 'sch_list',
      createdAt,
      updatedAt: createdAt,
    });
    const rows = [];
    for (let i = 0; i < 12; i++) {
      const createdAt = new Date(TIES.getTime() + (i < 4 ? -(i + 1) : i < 9 ? 0 : i - 8) * 1000);
      rows.push(row(`wf_${String.fromCharCode(97 + ((i * 7) % 12))}`, ORG, createdAt, i));
      rows.push(row(`wf_other_${i}`, 'org_other', TIES, i));
    }
    await database.db.insert(runs).values(rows);
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  /** Every page of a listing, following next_cursor. */
  async function allPages(query: Record<string, string>) {
    const seen: Array<{ workflow_id: string; created_at: string }> = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof listRuns>> = await listRuns(database.db, ORG, listQuerySchema.parse({ ...query, ...(cursor ? { cursor } : {}) }));
      seen.push(...page.runs);
      cursor = page.next_cursor;
    } while (cursor);
    return seen;
  }

  /** What the listing must return: the organization's matching runs, newest first, ties by workflow_id descending. */
  async function expected(where: ReturnType<typeof sql> = sql`true`) {
    const result = await database.db.execute(
      sql`select workflow_id from runs where organization_uuid = ${ORG} and ${where} order by created_at desc, workflow_id desc`,
    );
    return rowsOf(result).map((r) => r.workflow_id);
  }

  it.each([1, 2, 3, 5, 100])('pages of %i visit every run once, newest first, ties by workflow_id', async (limit) => {
    const seen = await allPages({ limit: String(limit) });
    expect(seen.map((r) => r.workflow_id)).toEqual(await expected());
    const tied = seen.filter((r) => r.created_at === TIES.toISOString()).map((r) => r.workflow_id);
    expect(tied).toEqual(['wf_l', 'wf_i', 'wf_g', 'wf_e', 'wf_b']);
  });

  it('pages through each filter across the tied runs', async () => {
    expect((await allPages({ limit: '2', status: 'FAILED' })).map((r) => r.workflow_id)).toEqual(await expected(sql`status = 'FAILED'`));
    expect((await allPages({ limit: '2', state_name: 'COMPLETED' })).map((r) => r.workflow_id)).toEqual(
      await expected(sql`state_name = 'completed'`),
    );
    expect((await allPages({ limit: '1', schedule_id: 'sch_list' })).map((r) => r.workflow_id)).toEqual(
      await expected(sql`schedule_id = 'sch_list'`),
    );
    expect(await expected(sql`schedule_id = 'sch_list'`)).toHaveLength(3);
    expect((await allPages({ limit: '1', workflow_type: 'type.odd', status: 'COMPLETED' })).map((r) => r.workflow_id)).toEqual(
      await expected(sql`workflow_type = 'type.odd' and status = 'COMPLETED'`),
    );
  });

  it('pages past a run whose id holds the cursor separator', async () => {
    const at = new Date(TIES.getTime() - 60_000);
    await database.db.insert(runs).values(
      ['wf_bar|1', 'wf_bar|2'].map((workflowId) => ({
        workflowId,
        organizationUuid: 'org_bar',
        workflowType: 'type.odd',
        version: '1.0',
        stateName: 'completed',
        status: 'COMPLETED',
        isTerminal: true,
        createdAt: at,
        updatedAt: at,
      })),
    );
    const first = await listRuns(database.db, 'org_bar', listQuerySchema.parse({ limit: '1' }));
    const second = await listRuns(database.db, 'org_bar', listQuerySchema.parse({ limit: '1', cursor: first.next_cursor }));
    expect([...first.runs, ...second.runs].map((r) => r.workflow_id)).toEqual(['wf_bar|2', 'wf_bar|1']);
  });

  it.each([
    ['a year before 0001', '-010000-01-01T00:00:00.000Z'],
    ['the last time JavaScript can hold', '+275760-09-13T00:00:00.000Z'],
    ['year 0', '0000-06-01T00:00:00.000Z'],
    ['a time toISOString would not write', '2026-02-30T00:00:00.000Z'],
    ['a date without its time', '2026-01-01'],
  ])('refuses a forged cursor holding %s with 400 invalid_cursor, before any query', async (_, time) => {
    const forged = Buffer.from(`${time}|wf_a`).toString('base64url');
    const err = await listRuns(database.db, ORG, listQuerySchema.parse({ cursor: forged })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_cursor', details: [{ field: 'cursor', rule: 'invalid_cursor' }] });
  });

  it.each([
    ['no separator', Buffer.from(TIES.toISOString()).toString('base64url')],
    ['no run id', Buffer.from(`${TIES.toISOString()}|`).toString('base64url')],
    ['a NUL in the run id', Buffer.from(`${TIES.toISOString()}|wf_\u0000`).toString('base64url')],
    ['not base64 of a cursor at all', 'bm90LWEtY3Vyc29y'],
  ])('refuses a cursor with %s with 400 invalid_cursor', async (_, forged) => {
    await expect(listRuns(database.db, ORG, listQuerySchema.parse({ cursor: forged }))).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
  });

  const cursor = Buffer.from(`${TIES.toISOString()}|wf_f`).toString('base64url');
  const filters: Array<Partial<ListQuery>> = [
    {},
    { workflow_type: 'type.odd' },
    { status: 'FAILED' },
    { state_name: 'failed' },
    { workflow_type: 'type.odd', status: 'FAILED' },
    { workflow_type: 'type.odd', state_name: 'failed' },
    { status: 'FAILED', state_name: 'failed' },
    { workflow_type: 'type.odd', status: 'FAILED', state_name: 'failed' },
    { schedule_id: 'sch_list' },
    { schedule_id: 'sch_list', status: 'CANCELLED' },
  ];
  const variants = filters.flatMap((f): Array<[string, Partial<ListQuery>]> => {
    const label = Object.keys(f).join(' + ') || 'no filter';
    return [
      [label, f],
      [`${label}, after a cursor`, { ...f, cursor }],
    ];
  });
  it.each(variants)('%s: read off a runs index in its order, never sorted', async (_label, variant) => {
    // Sorting and sequential scans priced out: a plan keeps either only if no index gives the order.
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_sort = off`);
      await tx.execute(sql`set local enable_seqscan = off`);
      const result = await tx.execute(sql`explain ${listRunsQuery(database.db, ORG, { limit: 20, ...variant })}`);
      const plan = rowsOf(result).map((r) => Object.values(r)[0]).join('\n');
      expect(plan).toMatch(/Index Scan using runs_org_\w+_idx on runs/);
      expect(plan).not.toMatch(/Sort|Bitmap/);
      if (variant.cursor) expect(plan).toMatch(/Index Cond: .*ROW\(created_at, workflow_id\) </);
    });
  });

  it.each([
    ['schedule_id', { schedule_id: 'sch_list' }, undefined, 'runs_org_schedule_created_idx'],
    ['an end user', {}, { endUserUuid: 'usr_list', clientUuid: 'cli_list' }, 'runs_org_end_user_created_idx'],
  ] as const)('%s: read off its partial index, which holds only the runs that have one', async (_label, filter, owner, index) => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_sort = off`);
      await tx.execute(sql`set local enable_seqscan = off`);
      const result = await tx.execute(sql`explain ${listRunsQuery(database.db, ORG, { limit: 20, ...filter }, owner)}`);
      const plan = rowsOf(result).map((r) => Object.values(r)[0]).join('\n');
      expect(plan).toContain(`Index Scan using ${index} on runs`);
      expect(plan).not.toMatch(/Sort|Bitmap/);
    });
  });
});
