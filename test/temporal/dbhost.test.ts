import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ConnectionStore } from '../../activities/connections';
import { createDbhostActivities } from '../../activities/dbhost';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import type { EngineWorkflowInput, FailedRunDetails, TransitionEvent } from '../../workflows/runtime/contract';
import type { RunData } from '../../workflows/runtime/definition';
import { engineWorkflowCode } from '../../src/worker/worker';
import { DBHOST_VALID_TOKEN, doubleEndpoints, startDbhostDouble } from '../doubles/dbhost-double';
import { dispatcherFor } from '../support/outbound';
import { testDataConverter, timeSkippingEnv } from '../support/temporal-test-env';
import { openMigratedPglite } from '../support/pglite';

/**
 * The two database-host types, with their real definitions and real activities
 * (a real ConnectionStore on an in-memory PGlite, the loopback double as the
 * provider), on Temporal's time-skipping server: deadlines of minutes (timeout
 * 600 s, poll every 30 s) pass in seconds, through real durable timers.
 */
jest.setTimeout(120_000);

const WAIT = 'dbhost.operations.wait';
const LIST = 'dbhost.endpoints.list';
const QUEUE = 'dbhost-test';
const ORG = 'org_dbhost_a';
const OTHER_ORG = 'org_dbhost_b';
const WRONG_TOKEN = 'dbhost-wrong-token-3f9a';
/** Per-attempt provider time-out of the activities under test: the hang costs 4 of these. */
const PROVIDER_TIMEOUT_MS = 300;

describe('dbhost workflow types on the time-skipping server', () => {
  let env: TestWorkflowEnvironment;
  let database: DatabaseHandle;
  let double: Awaited<ReturnType<typeof startDbhostDouble>>;
  let worker: Worker;
  let running: Promise<void>;
  const recorded: TransitionEvent[] = [];
  /** Transitions already attributed to an earlier execution of the same workflow id (a retry reuses it). */
  const seen = new Set<TransitionEvent>();
  const conn = { ok: '', wrongToken: '', esign: '', otherOrg: '', apiV2Root: '' };

  beforeAll(async () => {
    env = await timeSkippingEnv();
    database = await openMigratedPglite();
    double = await startDbhostDouble();
    const store = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    const create = async (org: string, plugin: string, name: string, token: string, config: Record<string, unknown>) =>
      (await store.create(org, plugin, name, { api_token: token }, config))!.connectionUuid;
    conn.ok = await create(ORG, 'dbhost', 'prod', DBHOST_VALID_TOKEN, { api_url: double.url });
    conn.wrongToken = await create(ORG, 'dbhost', 'stale', WRONG_TOKEN, { api_url: double.url });
    conn.apiV2Root = await create(ORG, 'dbhost', 'api-root', DBHOST_VALID_TOKEN, { api_url: `${double.url}/api/v2/` });
    conn.esign = await create(ORG, 'esign', 'signing', DBHOST_VALID_TOKEN, {});
    conn.otherOrg = await create(OTHER_ORG, 'dbhost', 'theirs', DBHOST_VALID_TOKEN, { api_url: double.url });

    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      ...engineWorkflowCode,
      activities: {
        async projectRunStarted() {},
        async projectTransition(e: TransitionEvent) {
          recorded.push(e);
        },
        ...createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: PROVIDER_TIMEOUT_MS, dispatcher: dispatcherFor([double.url]), connections: store }),
      },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await double?.close();
    await database?.close();
    await env?.teardown();
  });

  let counter = 0;
  const uid = (prefix: string) => `${prefix}-${++counter}-${randomBytes(3).toString('hex')}`;

  interface Outcome {
    id: string;
    ok: boolean;
    output: RunData;
    details?: FailedRunDetails;
    failureType?: string;
    steps: Array<[number, string, string, string]>;
    transitions: TransitionEvent[];
    /** Workflow time from the first recorded transition to the last, in seconds. */
    elapsed: number;
  }

  async function run(type: string, initial_data: RunData, options: { org?: string; resume?: EngineWorkflowInput['resume']; id?: string } = {}): Promise<Outcome> {
    const id = options.id ?? `wf_${uid('dbhost').replace(/-/g, '_')}`;
    const input: EngineWorkflowInput = { organization_uuid: options.org ?? ORG, initial_data, resume: options.resume };
    const handle = await env.client.workflow.start(type, { taskQueue: QUEUE, workflowId: id, args: [input] });
    let output: RunData;
    let details: FailedRunDetails | undefined;
    let failureType: string | undefined;
    let ok = true;
    try {
      output = (await handle.result()) as RunData;
    } catch (err) {
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause.nonRetryable).toBe(true);
      details = cause.details?.[0] as FailedRunDetails;
      failureType = cause.type ?? undefined;
      output = details.output;
      ok = false;
    }
    // From the transitions' workflow time: the test server's own clock may jump once a run is over.
    const transitions = recorded.filter((e) => e.workflow_id === id && !seen.has(e));
    transitions.forEach((e) => seen.add(e));
    const elapsed = transitions.length ? (Date.parse(transitions.at(-1)!.at) - Date.parse(transitions[0].at)) / 1000 : 0;
    return {
      id,
      ok,
      output,
      details,
      failureType,
      transitions,
      steps: transitions.map((e) => [e.seq, e.from, e.action, e.to]),
      elapsed,
    };
  }

  const callsFor = (fragment: string) => double.calls.filter((c) => c.path.includes(fragment));
  const opPath = (project: string, op: string) => `/api/v2/projects/${project}/operations/${op}`;
  const waitInput = (project: string, op: string, extra: RunData = {}) => ({
    connection_uuid: conn.ok,
    dbhost_project_id: project,
    dbhost_operation_id: op,
    timeout_seconds: 600,
    poll_interval: 30,
    ...extra,
  });
  const polls = (n: number): Array<[string, string, string]> =>
    Array.from({ length: n }, () => ['waiting_for_operation', 'poll', 'waiting_for_operation']);
  const actions = (o: Outcome) => o.steps.map(([, from, action, to]) => [from, action, to]);
  const atMs = (e: TransitionEvent) => Date.parse(e.at);

  describe(`${WAIT}: the transition table`, () => {
    it('pending → start → waiting; poll every poll_interval on durable timers; finished → finish → completed', async () => {
      const project = uid('floral');
      const op = uid('finishes-3');
      const o = await run(WAIT, waitInput(project, op));
      expect(o.ok).toBe(true);
      expect(o.output).toEqual({
        connection_uuid: conn.ok,
        dbhost_project_id: project,
        dbhost_operation_id: op,
        timeout_seconds: 600,
        poll_interval: 30,
        operation_status: 'finished',
        poll_count: 3,
        started_at_epoch: Math.floor(atMs(o.transitions[0]) / 1000),
      });
      expect(actions(o)).toEqual([['pending', 'start', 'waiting_for_operation'], ...polls(3), ['waiting_for_operation', 'finish', 'completed']]);
      expect(o.steps.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5]);
      // Three polls, 30 s apart in workflow time, the first 30 s after start; finish at once after the third.
      const times = o.transitions.map(atMs);
      for (let i = 1; i <= 3; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(30_000);
      for (let i = 1; i <= 3; i++) expect(times[i] - times[i - 1]).toBeLessThan(31_000);
      expect(times[4] - times[3]).toBeLessThan(1_000);
      expect(o.elapsed).toBeGreaterThanOrEqual(90);
      expect(o.elapsed).toBeLessThan(92);
      // poll_count increments with each poll; operation_status is the status each read saw.
      expect(o.transitions.slice(1, 4).map((e) => e.data)).toEqual([
        { poll_count: 1, operation_status: 'scheduling' },
        { poll_count: 2, operation_status: 'running' },
        { poll_count: 3, operation_status: 'finished' },
      ]);
      expect(o.transitions[0].data).toEqual({ poll_count: 0, started_at_epoch: o.output.started_at_epoch });
      expect(o.transitions.at(-1)!.terminal).toEqual({ status: 'COMPLETED', state_data: o.output });
      // Exactly one GET per poll, on the documented path, with the connection's token.
      expect(callsFor(op).map(({ method, path: p, authorization }) => ({ method, path: p, authorization }))).toEqual(
        Array.from({ length: 3 }, () => ({ method: 'GET', path: opPath(project, op), authorization: `Bearer ${DBHOST_VALID_TOKEN}` })),
      );
    });

    it.each([
      ['failed', 'fails-2', 2],
      ['error', 'errors-1', 1],
      ['cancelled', 'cancelled-2', 2],
    ])('status %s → timeout → failed at once, failure_reason naming the status', async (status, kind, reads) => {
      const project = uid('floral');
      const op = uid(kind);
      const o = await run(WAIT, waitInput(project, op));
      expect(o.ok).toBe(false);
      expect(o.failureType).toBe(`operation_${status}`);
      expect(actions(o)).toEqual([
        ['pending', 'start', 'waiting_for_operation'],
        ...polls(reads),
        ['waiting_for_operation', 'timeout', 'failed'],
      ]);
      const reason = `database-host operation ${op} of project ${project} ended with status ${status}`;
      expect(o.output).toEqual({
        ...waitInput(project, op),
        operation_status: status,
        poll_count: reads,
        started_at_epoch: expect.any(Number),
        failure_reason: reason,
        failure_type: `operation_${status}`,
        failed_step: 'timeout',
        failed_layer: 'provider',
        failed_at_state: 'waiting_for_operation',
        error: reason,
        error_type: `operation_${status}`,
        failed_action: 'timeout',
      });
      expect(o.transitions.at(-1)!.terminal).toEqual({ status: 'FAILED', state_data: o.output });
      // Not polled until the deadline: the run ended right after the read that saw the status.
      expect(callsFor(op)).toHaveLength(reads);
      expect(o.elapsed).toBeGreaterThanOrEqual(30 * reads);
      expect(o.elapsed).toBeLessThan(30 * reads + 2);
      // A retry would re-drive the waiting state with `poll`, from the data before the timeout.
      expect(o.details!.checkpoint).toMatchObject({ state: 'waiting_for_operation', next: { action: 'poll', delay_seconds: 0 }, seq: reads + 2 });
      expect(o.details!.checkpoint!.data).not.toHaveProperty('failure_reason');
    });

    it('status skipped → finish → completed with operation_status skipped (not polled until the deadline)', async () => {
      const project = uid('floral');
      const op = uid('skipped-2');
      const o = await run(WAIT, waitInput(project, op));
      expect(o.ok).toBe(true);
      expect(o.output).toMatchObject({ operation_status: 'skipped', poll_count: 2 });
      expect(o.output).not.toHaveProperty('failure_reason');
      expect(actions(o)).toEqual([['pending', 'start', 'waiting_for_operation'], ...polls(2), ['waiting_for_operation', 'finish', 'completed']]);
      expect(callsFor(op)).toHaveLength(2);
    });

    it('never finishing: elapsed ≥ timeout_seconds → timeout → failed, after 20 polls at 30 s in 600 s', async () => {
      const project = uid('floral');
      const op = uid('never');
      const o = await run(WAIT, waitInput(project, op));
      expect(o.ok).toBe(false);
      expect(o.failureType).toBe('timeout');
      expect(o.output).toMatchObject({
        operation_status: 'running',
        poll_count: 20,
        failure_type: 'timeout',
        failed_layer: 'engine',
        failed_step: 'timeout',
        failed_action: 'timeout',
        failed_at_state: 'waiting_for_operation',
        failure_reason: expect.stringMatching(
          new RegExp(`^database-host operation ${op} of project ${project} still running after 60\\d s: timeout_seconds \\(600\\) reached$`),
        ),
      });
      expect(actions(o)).toEqual([['pending', 'start', 'waiting_for_operation'], ...polls(20), ['waiting_for_operation', 'timeout', 'failed']]);
      expect(callsFor(op)).toHaveLength(20);
      // The deadline holds: measured from started_at_epoch, in workflow time.
      const end = atMs(o.transitions.at(-1)!) / 1000;
      expect(end - (o.output.started_at_epoch as number)).toBeGreaterThanOrEqual(600);
      expect(end - (o.output.started_at_epoch as number)).toBeLessThan(602);
      expect(o.elapsed).toBeGreaterThanOrEqual(599);
      expect(o.elapsed).toBeLessThan(602);
    });

    it('a poll is never scheduled past the deadline: timeout 45, interval 30 → polls at 30 s and 45 s', async () => {
      const o = await run(WAIT, waitInput(uid('floral'), uid('never'), { timeout_seconds: 45 }));
      expect(o.output).toMatchObject({ poll_count: 2, failure_type: 'timeout' });
      const [start, first, second] = o.transitions.map(atMs);
      expect(first - start).toBeGreaterThanOrEqual(30_000);
      expect(first - start).toBeLessThan(31_000);
      const deadlineMs = ((o.output.started_at_epoch as number) + 45) * 1000;
      expect(second).toBeGreaterThanOrEqual(deadlineMs);
      expect(second - deadlineMs).toBeLessThan(1_500);
      expect(o.elapsed).toBeLessThan(46.5);
    });

    it('defaults: timeout_seconds 120 and poll_interval 5 are applied and echoed', async () => {
      const project = uid('floral');
      const op = uid('never');
      const o = await run(WAIT, { connection_uuid: conn.ok, dbhost_project_id: project, dbhost_operation_id: op });
      expect(o.output).toMatchObject({ timeout_seconds: 120, poll_interval: 5, poll_count: 24, failure_type: 'timeout' });
      expect(o.elapsed).toBeGreaterThanOrEqual(119);
      expect(o.elapsed).toBeLessThan(121);
    });
  });

  describe(`${WAIT}: the decision order`, () => {
    it('finished wins over an elapsed deadline: finished on the read at 600 s completes the run', async () => {
      const op = uid('finishes-20');
      const o = await run(WAIT, waitInput(uid('floral'), op));
      expect(o.ok).toBe(true);
      expect(o.output).toMatchObject({ operation_status: 'finished', poll_count: 20 });
      const end = atMs(o.transitions.at(-1)!) / 1000;
      expect(end - (o.output.started_at_epoch as number)).toBeGreaterThanOrEqual(600);
    });

    it('failed wins over an elapsed deadline: failure_type says the status, not timeout', async () => {
      const o = await run(WAIT, waitInput(uid('floral'), uid('fails-20')));
      expect(o.output).toMatchObject({ operation_status: 'failed', poll_count: 20, failure_type: 'operation_failed', failed_layer: 'provider' });
    });

    it('running just before the deadline polls again; the same status at the deadline times out', async () => {
      const o = await run(WAIT, waitInput(uid('floral'), uid('never'), { timeout_seconds: 60 }));
      expect(o.steps.map(([, , action]) => action)).toEqual(['start', 'poll', 'poll', 'timeout']);
      expect(o.transitions.slice(1, 3).map((e) => e.data.operation_status)).toEqual(['running', 'running']);
    });
  });

  describe(`${WAIT}: provider and connection failures`, () => {
    it('401 (a connection with a stale token) fails the first poll, not retried: unauthorized, failed_action poll', async () => {
      const project = uid('floral');
      const op = uid('finishes-1');
      const o = await run(WAIT, { ...waitInput(project, op), connection_uuid: conn.wrongToken });
      expect(o.ok).toBe(false);
      expect(o.output).toMatchObject({
        failure_type: 'unauthorized',
        error_type: 'unauthorized',
        failed_step: 'poll',
        failed_action: 'poll',
        failed_layer: 'activity',
        failed_at_state: 'waiting_for_operation',
        failure_reason: 'database-host API answered HTTP 401: authentication required',
        poll_count: 0,
      });
      expect(o.output).not.toHaveProperty('status_code');
      expect(callsFor(op).map((c) => c.authorization)).toEqual([`Bearer ${WRONG_TOKEN}`]);
      expect(o.steps.map(([, , action]) => action)).toEqual(['start', 'fail']);
      // A retry re-drives the waiting state's poll (retry_action).
      expect(o.details!.checkpoint).toMatchObject({ state: 'waiting_for_operation', next: { action: 'poll', delay_seconds: 0 } });
    });

    it('404 for an unknown project or operation: not_found, one call each', async () => {
      const missingProject = uid('missing');
      const a = await run(WAIT, waitInput(missingProject, uid('finishes-1')));
      expect(a.output).toMatchObject({ failure_type: 'not_found', failure_reason: 'database-host API answered HTTP 404: project not found' });
      expect(callsFor(missingProject)).toHaveLength(1);
      const unknownOp = uid('nosuchop');
      const b = await run(WAIT, waitInput(uid('floral'), unknownOp));
      expect(b.output).toMatchObject({ failure_type: 'not_found', failure_reason: 'database-host API answered HTTP 404: operation not found' });
      expect(callsFor(unknownOp)).toHaveLength(1);
    });

    it('500 then 200 is retried by the activity: the poll counts once', async () => {
      const project = uid('flaky');
      const op = uid('finishes-1');
      const o = await run(WAIT, waitInput(project, op));
      expect(o.ok).toBe(true);
      expect(o.output).toMatchObject({ operation_status: 'finished', poll_count: 1 });
      expect(callsFor(op)).toHaveLength(2);
    });

    it('a provider that never answers: 4 bounded attempts, then failure_type timeout with failed_action poll', async () => {
      const project = uid('hang');
      const o = await run(WAIT, waitInput(project, uid('finishes-1')));
      expect(o.output).toMatchObject({
        failure_type: 'timeout',
        failed_action: 'poll',
        failure_reason: `database-host API did not answer within ${PROVIDER_TIMEOUT_MS} ms`,
      });
      expect(callsFor(project)).toHaveLength(4);
    });

    it.each([
      ['an esign connection (wrong plugin)', 'esign', 'connection_plugin_mismatch', /is a esign connection; this workflow type needs a dbhost connection/],
      ["another organization's connection", 'otherOrg', 'connection_not_found', /does not exist in this organization/],
      ['an unknown connection', 'unknown', 'connection_not_found', /does not exist in this organization/],
    ] as const)('%s fails the run closed, with zero calls to the provider', async (_, which, type, reason) => {
      const project = uid('floral');
      const before = double.calls.length;
      const connection_uuid = which === 'unknown' ? '6f1c1a0e-8a4e-4c55-9d0b-2f4d1c3b5a69' : conn[which];
      const o = await run(WAIT, { ...waitInput(project, uid('finishes-1')), connection_uuid });
      expect(o.output).toMatchObject({ failure_type: type, failed_action: 'poll', failure_reason: expect.stringMatching(reason) });
      expect(String(o.output.failure_reason)).toContain(connection_uuid);
      const list = await run(LIST, { connection_uuid, dbhost_project_id: project });
      expect(list.output).toMatchObject({ failure_type: type, failed_action: 'execute', failure_reason: expect.stringMatching(reason) });
      expect(double.calls.length).toBe(before);
    });
  });

  describe(`${WAIT}: retries, long waits`, () => {
    it('a retry after a timeout keeps the deadline: one more read, completing if the operation finished since', async () => {
      const project = uid('floral');
      const op = uid('finishes-21');
      const first = await run(WAIT, waitInput(project, op));
      expect(first.output).toMatchObject({ failure_type: 'timeout', poll_count: 20 });
      // The engine's search attributes are written when the state changes, not on each of the 20
      // polls: the tags at start, pending → waiting and waiting → failed. (Each patch() adds an
      // upsert of TemporalChangeVersion alone, once per run: not counted.)
      const { events } = await env.client.workflow.getHandle(first.id).fetchHistory();
      const upserts = events!.filter(
        (e) =>
          e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES &&
          Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some((k) => k !== 'TemporalChangeVersion'),
      );
      expect(upserts.length).toBeLessThanOrEqual(3);
      const checkpoint = first.details!.checkpoint!;
      const retried = await run(WAIT, {}, { id: first.id, resume: { reason: 'retry', ...checkpoint, attempt: 2 } });
      expect(retried.ok).toBe(true);
      expect(retried.output).toMatchObject({ operation_status: 'finished', poll_count: 21, started_at_epoch: first.output.started_at_epoch });
      // The retry read once, at once, and finished: no poll_interval waited.
      expect(retried.steps.map(([seq, , action]) => [seq, action])).toEqual([
        [23, 'poll'],
        [24, 'finish'],
      ]);
      expect(retried.transitions.every((e) => e.attempt === 2)).toBe(true);
      expect(retried.elapsed).toBeLessThan(1);

      // Still running at the retry: it fails again at once, one read later, the deadline unchanged.
      const stuck = uid('never');
      const again = await run(WAIT, waitInput(project, stuck, { timeout_seconds: 60 }));
      const third = await run(WAIT, {}, { id: again.id, resume: { reason: 'retry', ...again.details!.checkpoint!, attempt: 2 } });
      expect(third.output).toMatchObject({ failure_type: 'timeout', poll_count: (again.output.poll_count as number) + 1 });
      expect(third.steps.map(([, , action]) => action)).toEqual(['poll', 'timeout']);
      expect(third.elapsed).toBeLessThan(1);
      expect(callsFor(stuck)).toHaveLength((again.output.poll_count as number) + 1);
    });

    it('a long wait (poll every second for 600 s) continues as new, keeping seq, poll_count and the deadline', async () => {
      const project = uid('floral');
      const op = uid('never');
      const id = `wf_${uid('long').replace(/-/g, '_')}`;
      const handle = await env.client.workflow.start(WAIT, {
        taskQueue: QUEUE,
        workflowId: id,
        args: [{ organization_uuid: ORG, initial_data: waitInput(project, op, { poll_interval: 1 }) }],
      });
      const failure = (await handle.result().catch((e) => e)) as WorkflowFailedError;
      const output = ((failure.cause as ApplicationFailure).details![0] as FailedRunDetails).output;
      // One poll a second, plus the real time each read and transition takes: a little under 600 polls.
      const pollCount = output.poll_count as number;
      expect(output.failure_type).toBe('timeout');
      expect(pollCount).toBeGreaterThan(540);
      expect(pollCount).toBeLessThanOrEqual(600);
      const transitions = recorded.filter((e) => e.workflow_id === id);
      expect(transitions.map((e) => e.seq)).toEqual(Array.from({ length: pollCount + 2 }, (_, i) => i + 1));
      expect(transitions.map((e) => e.data.poll_count).filter((n) => n !== undefined)).toEqual(Array.from({ length: pollCount + 1 }, (_, i) => i));
      expect(callsFor(op)).toHaveLength(pollCount);
      const end = Date.parse(transitions.at(-1)!.at) / 1000;
      expect(end - (output.started_at_epoch as number)).toBeGreaterThanOrEqual(600);
      expect(end - (output.started_at_epoch as number)).toBeLessThan(602);
      // Continued as new: the execution that ended is not the first one.
      const latest = await env.client.workflow.getHandle(id).describe();
      expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    });
  });

  describe(LIST, () => {
    it('pending → execute → completed with the provider endpoints as returned', async () => {
      const project = uid('floral');
      const o = await run(LIST, { connection_uuid: conn.ok, dbhost_project_id: project });
      expect(o.ok).toBe(true);
      expect(o.output).toEqual({ connection_uuid: conn.ok, dbhost_project_id: project, endpoints: doubleEndpoints(project) });
      expect(actions(o)).toEqual([['pending', 'execute', 'completed']]);
      expect(callsFor(project).map(({ path: p, authorization }) => [p, authorization])).toEqual([
        [`/api/v2/projects/${project}/endpoints`, `Bearer ${DBHOST_VALID_TOKEN}`],
      ]);
    });

    it('an api_url ending in /api/v2 is the same host root; an empty list is a list', async () => {
      const project = uid('empty');
      const o = await run(LIST, { connection_uuid: conn.apiV2Root, dbhost_project_id: project });
      expect(o.output).toMatchObject({ endpoints: [] });
      expect(callsFor(project).map((c) => c.path)).toEqual([`/api/v2/projects/${project}/endpoints`]);
    });

    it.each([
      ['401', 'unauthorized', 'wrongToken', 'floral'],
      ['404', 'not_found', 'ok', 'missing'],
    ] as const)('%s is not retried: failure_type %s, one call', async (_, type, which, prefix) => {
      const project = uid(prefix);
      const o = await run(LIST, { connection_uuid: conn[which], dbhost_project_id: project });
      expect(o.output).toMatchObject({ failure_type: type, failed_action: 'execute', failed_step: 'execute', failed_at_state: 'pending' });
      expect(o.output).not.toHaveProperty('endpoints');
      expect(o.steps).toEqual([[1, 'pending', 'fail', 'failed']]);
      expect(callsFor(project)).toHaveLength(1);
    });

    it('500 then 200 is retried and completes; always 503 fails after 4 attempts with server_error', async () => {
      const flaky = uid('flaky');
      const ok = await run(LIST, { connection_uuid: conn.ok, dbhost_project_id: flaky });
      expect(ok.output).toMatchObject({ endpoints: doubleEndpoints(flaky) });
      expect(callsFor(flaky)).toHaveLength(2);
      const down = uid('down');
      const failed = await run(LIST, { connection_uuid: conn.ok, dbhost_project_id: down });
      expect(failed.output).toMatchObject({ failure_type: 'server_error', failure_reason: 'database-host API answered HTTP 503: service unavailable' });
      expect(callsFor(down)).toHaveLength(4);
    });
  });

  it('the api_token is nowhere in what the workflows recorded', () => {
    expect(recorded.length).toBeGreaterThan(50);
    const text = JSON.stringify(recorded);
    expect(text).not.toContain(DBHOST_VALID_TOKEN);
    expect(text).not.toContain(WRONG_TOKEN);
  });
});
