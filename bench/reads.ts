import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Connection } from '@temporalio/client';
import { sql } from 'drizzle-orm';
import { ConnectionStore } from '../activities/connections';
import { MasterPayloadKeys } from '../activities/payload-keys';
import { SecretBox } from '../activities/secret-box';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { createApi } from '../src/api';
import { createOrganization } from '../src/auth/org-tokens';
import { TemporalClients } from '../src/temporal-clients';
import { freePort } from '../test/support/ports';
import { createTestDatabase } from '../test/support/test-database';
import { request } from './lib/http';
import { type BenchOutcome, ms, report, type SummaryLine, verdict } from './lib/report';
import { type BenchStack, envNumber, scaled, scratchDir } from './lib/stack';
import { ratio, round, sideBySide, summarize } from './lib/stats';
import { Identity } from '../src/identity/identity';

const ORGS = 100;
const HISTORY_SIZES = [10, 100, 1000];
const SEED_CHUNK = 100_000;

interface ReadApi {
  label: string;
  url: string;
  size: number;
  orgs: Array<{ organization_uuid: string; token: string }>;
  seedMs: number;
  /** The top of the list query's plan: an index scan, or a sort of every run of the organization. */
  listPlan: string;
  close(): Promise<void>;
}

/** A database of its own (next to DATABASE_URL's, else a PGlite directory) holding `size` runs over 100 organizations. */
async function readApi(stack: BenchStack, label: string, size: number, withHistories: boolean): Promise<ReadApi> {
  const closers: Array<() => Promise<unknown>> = [];
  let database: DatabaseHandle;
  if (process.env.DATABASE_URL) {
    const created = await createTestDatabase(process.env.DATABASE_URL);
    closers.push(() => created.drop());
    database = await openDatabase({ databaseUrl: created.url });
  } else {
    database = await openDatabase({ pgliteDir: path.join(scratchDir, `pglite-reads-${label}`) });
  }
  closers.push(() => database.close());
  await database.migrate();
  const orgs: ReadApi['orgs'] = [];
  for (let i = 0; i < ORGS; i++) orgs.push(await createOrganization(database.db, `reads-${i}`));

  const t0 = performance.now();
  const orgArray = `ARRAY[${orgs.map((o) => `'${o.organization_uuid}'`).join(',')}]`;
  // Rows made by the database: run g belongs to organization g % 100; one run in 50 failed. In
  // statements of 100,000 rows, each well within the pool's query time-out on a loaded machine.
  for (let from = 1; from <= size; from += SEED_CHUNK) {
    await database.db.execute(
      sql.raw(`
      INSERT INTO runs (workflow_id, organization_uuid, workflow_type, version, state_name, is_terminal, status, attempt, last_seq, state_data, created_at, updated_at)
      SELECT 'wf_seed_' || lpad(g::text, 9, '0'),
             (${orgArray})[1 + g % ${ORGS}],
             CASE WHEN g % 3 = 0 THEN 'dbhost.endpoints.list' ELSE 'esign.resources.get-resource-information' END,
             '1.0',
             CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'completed' END,
             true,
             CASE WHEN g % 50 = 0 THEN 'FAILED' ELSE 'COMPLETED' END,
             1, 1,
             jsonb_build_object('base_url', 'https://esign.example.com/api', 'api_token', '[redacted]', 'status_code', 200,
               'response', jsonb_build_object('resources', jsonb_build_array(
                 jsonb_build_object('name', 'accounts', 'value', '/v2.1/accounts'),
                 jsonb_build_object('name', 'billing_plans', 'value', '/v2.1/billing_plans')))),
             timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second',
             timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second' + interval '2 seconds'
      FROM generate_series(${from}, ${Math.min(size, from + SEED_CHUNK - 1)}) AS g`),
    );
  }
  if (withHistories) {
    for (const n of HISTORY_SIZES) {
      await database.db.execute(
        sql.raw(`
          INSERT INTO runs (workflow_id, organization_uuid, workflow_type, version, state_name, is_terminal, status, attempt, last_seq, created_at, updated_at)
          VALUES ('wf_hist_${n}', '${orgs[0].organization_uuid}', 'dbhost.operations.wait', '1.0', 'waiting_for_operation', false, 'RUNNING', 1, ${n}, now(), now())`),
      );
      await database.db.execute(
        sql.raw(`
          INSERT INTO transitions (workflow_id, seq, from_state, to_state, action, attempt, at, data)
          SELECT 'wf_hist_${n}', s, CASE WHEN s = 1 THEN 'pending' ELSE 'waiting_for_operation' END, 'waiting_for_operation',
                 CASE WHEN s = 1 THEN 'start' ELSE 'poll' END, 1, now() + s * interval '1 second',
                 jsonb_build_object('poll_count', s - 1, 'operation_status', 'running')
          FROM generate_series(1, ${n}) AS s`),
      );
    }
  }
  await database.db.execute(sql`ANALYZE runs, transitions, api_tokens, organizations`);
  const seedMs = performance.now() - t0;
  // The plan of the list query as the API issues it (ORDER BY created_at DESC, workflow_id DESC LIMIT n + 1).
  const explained = await database.db.execute(
    sql.raw(`EXPLAIN SELECT * FROM runs WHERE organization_uuid = '${orgs[1].organization_uuid}' ORDER BY created_at DESC, workflow_id DESC LIMIT 11`),
  );
  const planRows = ((explained as unknown as { rows?: Array<Record<string, string>> }).rows ?? []).map((r) => Object.values(r)[0]);
  const listPlan = planRows
    .map((line) => line.trim().replace(/^->\s*/, '').replace(/\s+\(cost=.*$/, ''))
    .slice(0, 3)
    .join(' ← ');

  const connection = Connection.lazy({ address: stack.temporalAddress });
  closers.push(() => connection.close());
  const app: INestApplication = await createApi({
    config: stack.config,
    logger: stack.logger,
    database,
    temporal: new TemporalClients(connection, stack.config.temporalNamespace, new MasterPayloadKeys(randomBytes(32))),
    connections: new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections')),
    identity: new Identity(stack.config.identity, database.db, randomBytes(32)),
    masterKey: randomBytes(32),
  });
  const port = await freePort();
  await app.listen(port, '127.0.0.1');
  closers.push(() => app.close());
  return {
    label,
    url: `http://127.0.0.1:${port}`,
    size,
    orgs,
    seedMs,
    listPlan,
    async close() {
      for (const c of closers.reverse()) await c().catch((err) => console.error('bench: close step failed:', err));
    },
  };
}

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];

/**
 * 4. History and state reads. GET history of runs of 10, 100 and 1,000 transitions (is the cost
 * per transition flat?), and GET run / list runs against a projection holding 10^3 runs and one
 * holding 10^6 (10^5 on PGlite) runs, both across 100 organizations, each behind its own API in
 * this process, requests interleaved. Random organization (its own token) and random run per request.
 */
export async function reads(stack: BenchStack): Promise<BenchOutcome> {
  const pglite = !process.env.DATABASE_URL;
  const smallSize = envNumber('BENCH_READS_SMALL', 1_000);
  const largeSize = envNumber('BENCH_READS_LARGE', pglite ? 100_000 : 1_000_000);
  const n = scaled(200, 20);
  const small = await readApi(stack, 'small', smallSize, true);
  const large = await readApi(stack, 'large', largeSize, false);
  try {
    // History: cost per transition.
    const historySamples = await sideBySide(
      HISTORY_SIZES.map((size) => ({
        label: `GET /workflows/{id}/history, ${size} transitions`,
        task: async () => {
          const body = await request(small.url, small.orgs[0].token, `/api/workflows/wf_hist_${size}/history`);
          if (body.transitions.length !== size) throw new Error(`history of ${size} returned ${body.transitions.length}`);
        },
      })),
      n,
      1,
      5,
    );
    const hist = historySamples.map(summarize);
    const base = hist[0];
    const historyRows = hist.map((h, i) => ({
      transitions: HISTORY_SIZES[i],
      'p50 ms': h.p50_ms,
      'p99 ms': h.p99_ms,
      'µs per transition (p50/n)': round((h.p50_ms * 1000) / HISTORY_SIZES[i], 1),
      'marginal µs per transition over 10': i === 0 ? '' : round(((h.p50_ms - base.p50_ms) * 1000) / (HISTORY_SIZES[i] - HISTORY_SIZES[0]), 1),
    }));
    const marginal100 = (hist[1].p50_ms - base.p50_ms) / (HISTORY_SIZES[1] - HISTORY_SIZES[0]);
    const marginal1000 = (hist[2].p50_ms - base.p50_ms) / (HISTORY_SIZES[2] - HISTORY_SIZES[0]);

    // Run and list reads: 10^3 against 10^6.
    const runId = (api: ReadApi) => {
      const g = 1 + Math.floor(Math.random() * api.size);
      return { id: `wf_seed_${String(g).padStart(9, '0')}`, org: api.orgs[g % ORGS] };
    };
    const endpoints: Array<{ label: string; inTarget: boolean; call: (api: ReadApi) => Promise<void> }> = [
      {
        label: 'GET /workflows/{id}',
        inTarget: true,
        call: async (api) => {
          const { id, org } = runId(api);
          await request(api.url, org.token, `/api/workflows/${id}`);
        },
      },
      {
        // Pages no larger than what an organization holds at 10^3 (10 runs), so both sizes return full pages.
        label: 'GET /workflows?limit=10',
        inTarget: true,
        call: async (api) => {
          const body = await request(api.url, pick(api.orgs).token, '/api/workflows?limit=10');
          if (!body.runs.length) throw new Error('empty list');
        },
      },
      {
        label: 'GET /workflows?workflow_type=…&limit=5',
        inTarget: true,
        call: async (api) => {
          await request(api.url, pick(api.orgs).token, '/api/workflows?workflow_type=esign.resources.get-resource-information&limit=5');
        },
      },
      {
        // Read off runs_org_status_created_idx; FAILED runs are rare (1 in 50), so a page spans many runs.
        label: 'GET /workflows?status=FAILED (1 run in 50)',
        inTarget: false,
        call: async (api) => {
          await request(api.url, pick(api.orgs).token, '/api/workflows?status=FAILED');
        },
      },
    ];
    const readRows: Array<Record<string, unknown>> = [];
    const summary: SummaryLine[] = [
      {
        benchmark: '4. history reads',
        metric: 'p50 ms, 1,000 vs 10 transitions',
        subject: `1,000: ${ms(hist[2].p50_ms)}`,
        baseline: `10: ${ms(base.p50_ms)}`,
        ratio: ratio(hist[2].p50_ms, base.p50_ms),
        target: `flat per transition: marginal ${round(marginal100 * 1000, 1)} µs (100), ${round(marginal1000 * 1000, 1)} µs (1,000)`,
      },
    ];
    for (const e of endpoints) {
      const [s, l] = await sideBySide(
        [
          { label: `${e.label} @ ${smallSize}`, task: () => e.call(small) },
          { label: `${e.label} @ ${largeSize}`, task: () => e.call(large) },
        ],
        n,
        1,
        5,
      );
      const a = summarize(s);
      const b = summarize(l);
      const r50 = ratio(b.p50_ms, a.p50_ms);
      readRows.push({
        endpoint: e.label,
        [`p50 ms @ ${smallSize}`]: a.p50_ms,
        [`p50 ms @ ${largeSize}`]: b.p50_ms,
        [`p99 ms @ ${smallSize}`]: a.p99_ms,
        [`p99 ms @ ${largeSize}`]: b.p99_ms,
        'p50 large/small': r50,
        'p99 large/small': ratio(b.p99_ms, a.p99_ms),
        'target ≤ 1.5': e.inTarget ? verdict(r50 <= 1.5) : '(no target)',
      });
      summary.push({
        benchmark: `4. ${e.label}`,
        metric: 'p50 ms',
        subject: `${largeSize.toLocaleString('en-US')} runs: ${ms(b.p50_ms)}`,
        baseline: `${smallSize.toLocaleString('en-US')}: ${ms(a.p50_ms)}`,
        ratio: r50,
        target: e.inTarget ? '≤ 1.5' : '',
      });
    }
    return report(
      'reads',
      [
        { title: '4. History reads: GET /workflows/{id}/history by history length (ms)', rows: historyRows },
        { title: `4. Run and list reads: projection of ${smallSize} against ${largeSize} runs, 100 organizations`, rows: readRows },
        {
          title: '4. What was measured',
          rows: [
            {
              database: stack.database.kind,
              'small runs': smallSize,
              'large runs': largeSize,
              organizations: ORGS,
              'requests per row and size': n,
              'seed large (s)': round(large.seedMs / 1000, 1),
              'list query plan @ large': large.listPlan,
            },
          ],
        },
      ],
      summary,
      [
        `large size ${largeSize.toLocaleString('en-US')} runs${pglite ? ' (PGlite: 10^6 rows would dominate the run time; set DATABASE_URL for 10^6, or BENCH_READS_LARGE)' : ''}, seeded with INSERT … SELECT generate_series (100,000 rows per statement), then ANALYZE`,
        'every request also resolves its bearer token, like production (from the token cache after the first, TOKEN_CACHE_TTL_MS)',
        / Sort/.test(large.listPlan) || large.listPlan.startsWith('Sort')
          ? 'list plan: the query orders by created_at DESC (NULLS FIRST) but runs_org_created_idx is DESC NULLS LAST, so the index cannot give the order: every page sorts all runs of the organization'
          : 'list plan: pages come in index order (no sort)',
      ],
      { small_runs: smallSize, large_runs: largeSize, database: stack.database.kind },
    );
  } finally {
    await small.close();
    await large.close();
  }
}
