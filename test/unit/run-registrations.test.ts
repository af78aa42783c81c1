import type { PGlite } from '@electric-sql/pglite';
import { eq, inArray } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client';
import { runs } from '../../db/schema';
import { registrationsOf, RunRegistrations } from '../../activities/run-registrations';
import type { RunStartedEvent } from '../../workflows/runtime/contract';
import { lostPool } from '../support/lost-pool';
import { openMigratedPglite } from '../support/pglite';

describe('RunRegistrations (the API registering the runs it started)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  const start = (workflow_id: string, extra: Partial<RunStartedEvent> = {}): RunStartedEvent => ({
    workflow_id,
    organization_uuid: 'org_test',
    workflow_type: 'test.type',
    version: '1.0',
    state_name: 'pending',
    attempt: 1,
    at: new Date().toISOString(),
    ...extra,
  });

  const BIND = 0x42; // 'B': PGlite runs a prepared statement as bind, execute, sync

  /**
   * The database, with the statements its PGlite client runs seen first by `intercept` (the
   * registrations' statement is prepared once, then bound at each write).
   */
  const intercepted = (intercept: (statement: string) => void) => {
    const client = (database.db as unknown as { $client: PGlite }).$client;
    const interceptingClient = new Proxy(client, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === 'execProtocol') {
          return (message: Uint8Array, ...rest: unknown[]) => {
            if (message[0] === BIND) intercept('bind');
            return (value as (...args: unknown[]) => Promise<unknown>).call(target, message, ...rest);
          };
        }
        if (key === 'query') {
          return (text: string, ...rest: unknown[]) => {
            intercept(text);
            return (value as (...args: unknown[]) => Promise<unknown>).call(target, text, ...rest);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return new Proxy(database.db, {
      get: (target, key, receiver) => (key === '$client' ? interceptingClient : Reflect.get(target, key, receiver)),
    });
  };

  /** The database, with each statement its client is sent counted. */
  const counted = () => {
    const statements: string[] = [];
    return { db: intercepted((statement) => statements.push(statement)), statements };
  };

  const rowsOf = (ids: string[]) => database.db.select().from(runs).where(inArray(runs.workflowId, ids));

  it('writes a lone start at once, in one statement', async () => {
    const { db, statements } = counted();
    await new RunRegistrations(db).projectRunStarted(start('wf_reg_lone'));
    expect(statements).toHaveLength(1);
    expect(await rowsOf(['wf_reg_lone'])).toHaveLength(1);
  });

  it('writes starts that arrive while one is being written together, in one more statement', async () => {
    const { db, statements } = counted();
    const registrations = new RunRegistrations(db);
    const ids = Array.from({ length: 20 }, (_, i) => `wf_reg_batch_${i}`);
    await Promise.all(ids.map((id) => registrations.projectRunStarted(start(id))));
    expect(statements).toHaveLength(2);
    expect((await rowsOf(ids)).map((r) => r.workflowId).sort()).toEqual([...ids].sort());
  });

  it('takes the newest attempt of a run registered twice in one batch', async () => {
    const registrations = new RunRegistrations(database.db);
    await Promise.all([
      registrations.projectRunStarted(start('wf_reg_first')),
      registrations.projectRunStarted(start('wf_reg_twice', { attempt: 2, state_name: 'second' })),
      registrations.projectRunStarted(start('wf_reg_twice', { attempt: 1, state_name: 'first' })),
    ]);
    const [run] = await database.db.select().from(runs).where(eq(runs.workflowId, 'wf_reg_twice'));
    expect(run).toMatchObject({ attempt: 2, stateName: 'second', status: 'RUNNING' });
  });

  it('the second writer of a start (the workflow after the API, or the API after the workflow) waits for the first write instead of its own', async () => {
    const { db, statements } = counted();
    const registrations = new RunRegistrations(db);
    const api = registrations.projectRunStarted(start('wf_reg_two_writers', { state_name: 'from_api' }));
    const workflow = registrations.projectRunStarted(start('wf_reg_two_writers', { state_name: 'from_workflow' }));
    await Promise.all([api, workflow]);
    await registrations.projectRunStarted(start('wf_reg_two_writers', { state_name: 'later' }));
    expect(statements).toHaveLength(1);
    const [run] = await rowsOf(['wf_reg_two_writers']);
    expect(run).toMatchObject({ attempt: 1, stateName: 'from_api' });
  });

  it('a retry of a registered run (its next attempt, once it ended) is written; an older start is not', async () => {
    const { db, statements } = counted();
    const registrations = new RunRegistrations(db);
    await registrations.projectRunStarted(start('wf_reg_attempts', { attempt: 1, state_name: 'first', first_execution_run_id: 'run_1' }));
    await database.db.update(runs).set({ isTerminal: true, status: 'FAILED', lastSeq: 1 }).where(eq(runs.workflowId, 'wf_reg_attempts'));
    await registrations.projectRunStarted(start('wf_reg_attempts', { attempt: 2, state_name: 'second', first_execution_run_id: 'run_2' }));
    await registrations.projectRunStarted(start('wf_reg_attempts', { attempt: 1, state_name: 'stale' }));
    expect(statements).toHaveLength(2);
    const [run] = await rowsOf(['wf_reg_attempts']);
    expect(run).toMatchObject({ attempt: 2, stateName: 'second', status: 'RUNNING', firstExecutionRunId: 'run_2' });
  });

  it("refuses a start under another run's workflow id, even where that run's start was registered in this process", async () => {
    const { db, statements } = counted();
    const registrations = new RunRegistrations(db);
    const inUse = { type: 'workflow_id_in_use', nonRetryable: true };
    await registrations.projectRunStarted(start('wf_reg_taken', { first_execution_run_id: 'run_a' }));
    await expect(registrations.projectRunStarted(start('wf_reg_taken', { organization_uuid: 'org_other', first_execution_run_id: 'run_b' }))).rejects.toMatchObject(
      inUse,
    );
    await expect(registrations.projectRunStarted(start('wf_reg_taken', { first_execution_run_id: 'run_c' }))).rejects.toMatchObject(inUse);
    expect(statements).toHaveLength(3);
    // Together in one batch: each run's start in a statement of its own, the first one's written.
    const outcomes = await Promise.allSettled([
      registrations.projectRunStarted(start('wf_reg_lead_2')),
      registrations.projectRunStarted(start('wf_reg_contested', { first_execution_run_id: 'run_a' })),
      registrations.projectRunStarted(start('wf_reg_contested', { organization_uuid: 'org_other', first_execution_run_id: 'run_b' })),
      registrations.projectRunStarted(start('wf_reg_contested')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const [taken, contested] = await rowsOf(['wf_reg_taken', 'wf_reg_contested']).then((rows) => rows.sort((a, b) => b.workflowId.localeCompare(a.workflowId)));
    expect(taken).toMatchObject({ organizationUuid: 'org_test', firstExecutionRunId: 'run_a' });
    expect(contested).toMatchObject({ organizationUuid: 'org_test', firstExecutionRunId: 'run_a' });
  });

  it('when the first write of a start fails, the second writer writes it', async () => {
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
    let failNext = true;
    const flaky = intercepted(() => {
      if (!failNext) return;
      failNext = false;
      throw lost;
    });
    const registrations = new RunRegistrations(flaky);
    const first = registrations.projectRunStarted(start('wf_reg_retaken'));
    const second = registrations.projectRunStarted(start('wf_reg_retaken'));
    await expect(first).rejects.toBe(lost);
    await expect(second).resolves.toBeUndefined();
    expect(await rowsOf(['wf_reg_retaken'])).toHaveLength(1);
  });

  it('the API and the worker of one process share the registrations of their database handle', () => {
    expect(registrationsOf(database.db)).toBe(registrationsOf(database.db));
    expect(registrationsOf(database.db)).not.toBe(registrationsOf(counted().db));
  });

  it('fails only the start the database refuses; the others of its batch are written', async () => {
    const registrations = new RunRegistrations(database.db);
    // A time Postgres cannot hold: a data exception (class 22) from the real database.
    const outcomes = await Promise.allSettled([
      registrations.projectRunStarted(start('wf_reg_lead')),
      registrations.projectRunStarted(start('wf_reg_ok_1')),
      registrations.projectRunStarted(start('wf_reg_refused', { at: '+275760-09-13T00:00:00.000Z' })),
      registrations.projectRunStarted(start('wf_reg_ok_2')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((await rowsOf(['wf_reg_lead', 'wf_reg_ok_1', 'wf_reg_refused', 'wf_reg_ok_2'])).map((r) => r.workflowId).sort()).toEqual([
      'wf_reg_lead',
      'wf_reg_ok_1',
      'wf_reg_ok_2',
    ]);
  });

  it('fails a whole batch at once when the database is gone, without trying its starts one by one', async () => {
    const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
    let statements = 0;
    const gone = { $client: lostPool(lost, () => statements++) } as unknown as DatabaseHandle['db'];
    const registrations = new RunRegistrations(gone);
    const outcomes = await Promise.allSettled(['wf_gone_1', 'wf_gone_2', 'wf_gone_3'].map((id) => registrations.projectRunStarted(start(id))));
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason === lost)).toBe(true);
    expect(statements).toBe(2);
  });
});
