import { ApplicationFailure } from '@temporalio/common';
import { asc, eq, sql } from 'drizzle-orm';
import { isRefusedData, sqlState } from '../../activities/database-errors';
import { createProjection, dagChildReads, TRANSITIONS_CHANNEL } from '../../activities/projection';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { runs, transitions } from '../../db/schema';
import type { RunStartedEvent, TransitionEvent } from '../../workflows/runtime/contract';
import { createOrganization, createToken, resolveToken, revokeToken } from '../../src/auth/org-tokens';
import { lostPool } from '../support/lost-pool';
import { openMigratedPglite } from '../support/pglite';
import { createTestDatabase } from '../support/test-database';

const identity = { organization_uuid: 'org_test', workflow_type: 'test.type', version: '1.0' };

const transition = (workflow_id: string, seq: number, extra: Partial<TransitionEvent> = {}): TransitionEvent => ({
  ...identity,
  workflow_id,
  seq,
  from: 'pending',
  to: 'running',
  action: `step${seq}`,
  attempt: 1,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
  data: { n: seq },
  ...extra,
});

// This suite always runs on PGlite, so the embedded default stays covered when CI uses Postgres.
describe('projection on PGlite', () => {
  let database: DatabaseHandle;

  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  it('records each (workflow_id, seq) once, however often it is delivered, and notifies', async () => {
    const projection = createProjection(database.db);
    const heard: string[] = [];
    const unlisten = await database.listen(TRANSITIONS_CHANNEL, (p) => heard.push(p));
    await projection.projectRunStarted({ ...identity, workflow_id: 'wf_a', state_name: 'pending', attempt: 1, at: new Date().toISOString() });
    await projection.projectTransition(transition('wf_a', 1));
    await projection.projectTransition(transition('wf_a', 1, { data: { n: 'duplicate' } }));
    await projection.projectTransition(transition('wf_a', 2, { from: 'running', to: 'done', terminal: { status: 'COMPLETED', state_data: { ok: true } } }));
    // A late redelivery of seq 1 must not move the run backwards.
    await projection.projectTransition(transition('wf_a', 1));

    const rows = await database.db.select().from(transitions).where(eq(transitions.workflowId, 'wf_a')).orderBy(asc(transitions.seq));
    expect(rows.map((r) => [r.seq, r.data])).toEqual([
      [1, { n: 1 }],
      [2, { n: 2 }],
    ]);
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_a'));
    expect(run).toMatchObject({ stateName: 'done', lastSeq: 2, isTerminal: true, status: 'COMPLETED', stateData: { ok: true } });
    // Notifications arrive on their own connection: wait for the two expected, then a little longer
    // so that one for a redelivery would have arrived too.
    for (const deadline = Date.now() + 10_000; heard.length < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual(['wf_a:1', 'wf_a:2t']);
    await unlisten();
  });

  it("reads a Dag child's projected run only within its organization", async () => {
    const projection = createProjection(database.db);
    const reads = dagChildReads(database.db);
    const start = (attempt: number) => ({
      ...identity,
      workflow_id: 'wf_parent.step',
      state_name: 'pending',
      attempt,
      at: new Date().toISOString(),
      first_execution_run_id: `run_${attempt}`,
    });
    await projection.projectRunStarted(start(1));
    await projection.projectTransition(transition('wf_parent.step', 1, { first_execution_run_id: 'run_1', terminal: { status: 'FAILED', state_data: { failed: 1 } } }));
    await projection.projectRunStarted(start(2));
    await projection.projectTransition(
      transition('wf_parent.step', 2, { attempt: 2, first_execution_run_id: 'run_2', terminal: { status: 'COMPLETED', state_data: { ok: 1 } } }),
    );
    expect(await reads.projectedRun({ organization_uuid: 'org_test', workflow_id: 'wf_parent.step' })).toEqual({
      status: 'COMPLETED',
      attempt: 2,
      last_seq: 2,
      state_data: { ok: 1 },
    });
    expect(await reads.projectedRun({ organization_uuid: 'org_other', workflow_id: 'wf_parent.step' })).toBeNull();
    expect(await reads.projectedRun({ organization_uuid: 'org_test', workflow_id: 'wf_parent.none' })).toBeNull();
  });

  it('stores a NUL from a provider answer as U+FFFD instead of failing the write forever', async () => {
    const projection = createProjection(database.db);
    const terminal = { status: 'COMPLETED' as const, state_data: { reply: 'a\u0000b' } };
    await projection.projectTransition(transition('wf_nul', 1, { data: { 'k\u0000': ['\u0000'] }, terminal }));
    const [row] = await database.db.select().from(transitions).where(eq(transitions.workflowId, 'wf_nul'));
    expect(row.data).toEqual({ 'k\uFFFD': ['\uFFFD'] });
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_nul'));
    expect(run.stateData).toEqual({ reply: 'a\uFFFDb' });
  });

  it('stores a lone surrogate (key or value) as U+FFFD instead of failing the write forever', async () => {
    const projection = createProjection(database.db);
    const terminal = { status: 'COMPLETED' as const, state_data: { '\udc00': 'x\ud800' } };
    await projection.projectTransition(transition('wf_surrogate', 1, { data: { 'k\ud800': ['\udfff', '\ud83d\ude00'] }, terminal }));
    const [row] = await database.db.select().from(transitions).where(eq(transitions.workflowId, 'wf_surrogate'));
    expect(row.data).toEqual({ 'k\uFFFD': ['\uFFFD', '\ud83d\ude00'] });
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_surrogate'));
    expect(run.stateData).toEqual({ '\uFFFD': 'x\uFFFD' });
  });

  it('fails a write the database refuses for its data for good (projection_rejected), naming no value', async () => {
    const projection = createProjection(database.db);
    // A time Postgres cannot hold: a data exception (class 22) from the real database.
    const outOfRange = '+275760-09-13T00:00:00.000Z';
    const err = await projection.projectTransition(transition('wf_refused', 1, { at: outOfRange })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'projection_rejected', nonRetryable: true });
    expect((err as Error).message).toMatch(/^the database refused to store transition 1 \(SQLSTATE 22[0-9A-Z]{3}\)$/);
    const rows = await database.db.select().from(transitions).where(eq(transitions.workflowId, 'wf_refused'));
    expect(rows).toEqual([]);
    const started = projection.projectRunStarted({ ...identity, workflow_id: 'wf_refused', state_name: 'pending', attempt: 1, at: outOfRange });
    await expect(started).rejects.toMatchObject({ type: 'projection_rejected', nonRetryable: true });
  });

  it('rethrows a lost connection as it is, so the projection retries until the database is back', async () => {
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
    const refusing = { $client: lostPool(lost), insert: () => { throw lost; } } as unknown as DatabaseHandle['db'];
    const projection = createProjection(refusing);
    await expect(projection.projectTransition(transition('wf_lost', 1))).rejects.toBe(lost);
    await expect(
      projection.projectRunStarted({ ...identity, workflow_id: 'wf_lost', state_name: 'pending', attempt: 1, at: new Date().toISOString() }),
    ).rejects.toBe(lost);
  });

  it('tells refused data (jsonb with a lone surrogate, a bad integer) from an outage', async () => {
    const refused = await database.db.execute(sql`select ${'{"a":"\\ud800"}'}::jsonb`).catch((e: unknown) => e);
    expect(sqlState(refused)).toBe('22P02');
    expect(isRefusedData(refused)).toBe(true);
    expect(isRefusedData(await database.db.execute(sql`select 'x'::int`).catch((e: unknown) => e))).toBe(true);
    expect(isRefusedData(Object.assign(new Error('gone'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isRefusedData(Object.assign(new Error('wrapped'), { cause: { code: '57P01' } }))).toBe(false);
    expect(isRefusedData(Object.assign(new Error('wrapped'), { cause: { code: '54001' } }))).toBe(true);
  });

  it('creates the run from its first transition when no start was projected (direct starts)', async () => {
    const projection = createProjection(database.db);
    await projection.projectTransition(transition('wf_b', 1));
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_b'));
    expect(run).toMatchObject({ organizationUuid: 'org_test', stateName: 'running', lastSeq: 1, status: 'RUNNING' });
  });

  it('re-opens a failed run only for a retry: the next attempt, once the run ended', async () => {
    const projection = createProjection(database.db);
    const started = { ...identity, workflow_id: 'wf_c', state_name: 'pending', at: new Date().toISOString() };
    await projection.projectRunStarted({ ...started, attempt: 1, first_execution_run_id: 'run_c1' });
    const failed = { to: 'failed', first_execution_run_id: 'run_c1', terminal: { status: 'FAILED' as const, state_data: { failure_reason: 'x' } } };
    await projection.projectTransition(transition('wf_c', 1, failed));
    await projection.projectRunStarted({ ...started, attempt: 1, first_execution_run_id: 'run_c1' });
    let [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_c'));
    expect(run).toMatchObject({ status: 'FAILED', attempt: 1, isTerminal: true });
    await projection.projectRunStarted({ ...started, attempt: 2, first_execution_run_id: 'run_c2' });
    [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_c'));
    expect(run).toMatchObject({ status: 'RUNNING', attempt: 2, isTerminal: false, stateData: null, lastSeq: 1, firstExecutionRunId: 'run_c2' });
    // Written twice (the API registers the retry it started, the retry's workflow writes its start): no change.
    await projection.projectRunStarted({ ...started, attempt: 2, first_execution_run_id: 'run_c2' });
    // Not a retry of a RUNNING run, however new its attempt.
    await expect(projection.projectRunStarted({ ...started, attempt: 3, first_execution_run_id: 'run_c3' })).rejects.toMatchObject({
      type: 'workflow_id_in_use',
    });
    [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_c'));
    expect(run).toMatchObject({ status: 'RUNNING', attempt: 2, firstExecutionRunId: 'run_c2' });
  });

  it("writes an end user's run with its owner, which neither a later start nor a retry's rewrites", async () => {
    const projection = createProjection(database.db);
    const owner = { end_user_uuid: 'usr_1', client_uuid: 'cli_1' };
    const started = { ...identity, workflow_id: 'wf_owned', state_name: 'pending', at: new Date().toISOString(), owner };
    const fails = (seq: number, attempt: number, chain: string) =>
      projection.projectTransition(transition('wf_owned', seq, { attempt, first_execution_run_id: chain, terminal: { status: 'FAILED', state_data: {} } }));
    await projection.projectRunStarted({ ...started, attempt: 1, first_execution_run_id: 'run_o1' });
    await projection.projectRunStarted({ ...started, attempt: 1, owner: undefined });
    await fails(1, 1, 'run_o1');
    await projection.projectRunStarted({ ...started, attempt: 2, first_execution_run_id: 'run_o2', owner: { end_user_uuid: 'usr_2', client_uuid: 'cli_2' } });
    await fails(2, 2, 'run_o2');
    await projection.projectRunStarted({ ...started, attempt: 3, first_execution_run_id: 'run_o3', owner: undefined });
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_owned'));
    expect(run).toMatchObject({ endUserUuid: 'usr_1', clientUuid: 'cli_1', attempt: 3 });
  });

  it('stores tokens as hashes and honours revocation', async () => {
    const org = await createOrganization(database.db, 'unit');
    expect(org.token).toMatch(/^wes_[A-Za-z0-9_-]{43}$/);
    const stored = await database.db.execute(`select token_hash from api_tokens where token_id = '${org.token_id}'`);
    expect(JSON.stringify(stored)).not.toContain(org.token);
    expect(await resolveToken(database.db, org.token)).toEqual({ token_id: org.token_id, organization_uuid: org.organization_uuid, username: 'unit-admin' });
    const second = await createToken(database.db, org.organization_uuid, 'second');
    expect(await revokeToken(database.db, second.token)).toBe(true);
    expect(await revokeToken(database.db, second.token)).toBe(false);
    expect(await resolveToken(database.db, second.token)).toBeUndefined();
    expect(await resolveToken(database.db, org.token)).toBeDefined();
    await expect(createToken(database.db, 'org_missing', 'x')).rejects.toThrow(/does not exist/);
  });
});

// On PGlite always; on Postgres too when DATABASE_URL is set: who owns a row is decided in SQL.
const engines: Array<[string, () => Promise<{ database: DatabaseHandle; drop(): Promise<void> }>]> = [
  ['PGlite', async () => ({ database: await openDatabase({}), drop: async () => undefined })],
];
if (process.env.DATABASE_URL) {
  engines.push([
    'Postgres',
    async () => {
      const created = await createTestDatabase(process.env.DATABASE_URL!);
      return { database: await openDatabase({ databaseUrl: created.url, poolSize: 2 }), drop: created.drop };
    },
  ]);
}

describe.each(engines)('a workflow id names one run (projection on %s)', (_, open) => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ database, drop } = await open());
    await database.migrate();
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  const rowOf = async (id: string) => (await database.db.select().from(runs).where(eq(runs.workflowId, id)))[0];
  const historyOf = async (id: string) =>
    (await database.db.select().from(transitions).where(eq(transitions.workflowId, id)).orderBy(asc(transitions.seq))).map((t) => [
      t.seq,
      t.attempt,
      t.data,
    ]);
  const inUse = { type: 'workflow_id_in_use', nonRetryable: true, message: expect.stringContaining('POST /api/workflows/') };
  const started = (workflow_id: string, extra: Partial<RunStartedEvent> = {}): RunStartedEvent => ({
    ...identity,
    workflow_id,
    state_name: 'pending',
    attempt: 1,
    at: new Date().toISOString(),
    ...extra,
  });
  /** A run of org_test, chain run_1, that ended after two transitions. */
  const endedRun = async (id: string, status: 'COMPLETED' | 'FAILED') => {
    const projection = createProjection(database.db);
    await projection.projectRunStarted(started(id, { first_execution_run_id: 'run_1' }));
    await projection.projectTransition(transition(id, 1, { first_execution_run_id: 'run_1' }));
    await projection.projectTransition(transition(id, 2, { first_execution_run_id: 'run_1', to: 'done', terminal: { status, state_data: { own: true } } }));
    return { projection, row: await rowOf(id), history: await historyOf(id) };
  };

  it("never writes onto another organization's run: its start and transitions are refused, nothing changes", async () => {
    const { projection, row, history } = await endedRun('wf_taken', 'COMPLETED');
    const other = { organization_uuid: 'org_other', first_execution_run_id: 'run_other' };
    await expect(projection.projectRunStarted(started('wf_taken', other))).rejects.toMatchObject(inUse);
    for (const seq of [1, 2, 3]) {
      await expect(projection.projectTransition(transition('wf_taken', seq, { ...other, data: { foreign: seq } }))).rejects.toMatchObject(inUse);
    }
    // Not even as a retry of it, nor as a start that names no execution.
    await expect(projection.projectRunStarted(started('wf_taken', { ...other, attempt: 2 }))).rejects.toMatchObject(inUse);
    await expect(projection.projectRunStarted(started('wf_taken', { organization_uuid: 'org_other' }))).rejects.toMatchObject(inUse);
    expect(await rowOf('wf_taken')).toEqual(row);
    expect(await historyOf('wf_taken')).toEqual(history);
  });

  it('refuses a new execution under a used id in the same organization, whatever its transitions', async () => {
    for (const status of ['COMPLETED', 'FAILED'] as const) {
      const id = `wf_reused_${status}`;
      const { projection, row, history } = await endedRun(id, status);
      const reuse = { first_execution_run_id: 'run_2' };
      await expect(projection.projectRunStarted(started(id, reuse))).rejects.toMatchObject(inUse);
      // Fewer transitions than the run had, or more: none is merged.
      for (const seq of [1, 2, 3]) await expect(projection.projectTransition(transition(id, seq, reuse))).rejects.toMatchObject(inUse);
      expect(await rowOf(id)).toEqual(row);
      expect(await historyOf(id)).toEqual(history);
    }
  });

  it("takes the run's own writes: its chain's (continue-as-new included), then its retry's, and no longer the chain it retried", async () => {
    const { projection } = await endedRun('wf_own', 'FAILED');
    await projection.projectRunStarted(started('wf_own', { first_execution_run_id: 'run_1' }));
    await projection.projectRunStarted(started('wf_own', { attempt: 2, first_execution_run_id: 'run_r' }));
    await projection.projectTransition(transition('wf_own', 3, { attempt: 2, first_execution_run_id: 'run_r' }));
    await expect(projection.projectTransition(transition('wf_own', 4, { first_execution_run_id: 'run_1' }))).rejects.toMatchObject(inUse);
    expect(await rowOf('wf_own')).toMatchObject({ attempt: 2, lastSeq: 3, status: 'RUNNING', firstExecutionRunId: 'run_r' });
    expect((await historyOf('wf_own')).map(([seq, attempt]) => [seq, attempt])).toEqual([
      [1, 1],
      [2, 1],
      [3, 2],
    ]);
  });

  it('a registration that names no execution changes nothing; a row registered so takes the chain of its start', async () => {
    const projection = createProjection(database.db);
    await projection.projectRunStarted(started('wf_unnamed'));
    await projection.projectRunStarted(started('wf_unnamed', { first_execution_run_id: 'run_1' }));
    await projection.projectRunStarted(started('wf_unnamed'));
    expect(await rowOf('wf_unnamed')).toMatchObject({ firstExecutionRunId: 'run_1', lastSeq: 0 });
    await expect(projection.projectRunStarted(started('wf_unnamed', { first_execution_run_id: 'run_2' }))).rejects.toMatchObject(inUse);
  });

  it('a row written before chains were recorded takes the chain of its next transition, then refuses others', async () => {
    const projection = createProjection(database.db);
    await projection.projectRunStarted(started('wf_legacy'));
    await projection.projectTransition(transition('wf_legacy', 1));
    await expect(projection.projectRunStarted(started('wf_legacy', { first_execution_run_id: 'run_new' }))).rejects.toMatchObject(inUse);
    await projection.projectTransition(transition('wf_legacy', 2, { first_execution_run_id: 'run_1' }));
    expect(await rowOf('wf_legacy')).toMatchObject({ firstExecutionRunId: 'run_1', lastSeq: 2 });
    await expect(projection.projectTransition(transition('wf_legacy', 3, { first_execution_run_id: 'run_new' }))).rejects.toMatchObject(inUse);
  });
});
