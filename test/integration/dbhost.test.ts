import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter, EncryptionCodec } from '../../activities/payload-codec';
import { dbhostEndpointsList, dbhostOperationsWait, TASK_QUEUE, type EngineWorkflowInput } from '../../workflows';
import { READ_GRACE_SECONDS } from '../../workflows/dbhost-operations-wait';
import { DBHOST_VALID_TOKEN, type DbhostCall, doubleEndpoints } from '../doubles/dbhost-double';
import { api, control, freshOrgToken, payloadsIn, readStream, secretLeaks, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

/**
 * The two database-host workflow types end to end: the real HTTP API, the real
 * worker (PROVIDER_TIMEOUT_MS=1500, 4 attempts backing off from 500 ms),
 * connections created through POST /api/connections, and the loopback
 * database-host double (test/doubles/dbhost-double.ts), whose project and
 * operation ids pick its behaviour. Waits use poll_interval 1–2 s and deadlines
 * of seconds; the minutes-long ones run on the time-skipping server (test/temporal/dbhost.test.ts).
 */
jest.setTimeout(90_000);

const WAIT = 'dbhost.operations.wait';
const LIST = 'dbhost.endpoints.list';

/** Distinctive, so the secret checks cannot match by accident. */
const WRONG_TOKEN = `${uniqueId('wrong-dbhost-token')}-q8`;
const ESIGN_CONNECTION_TOKEN = `${uniqueId('esign-conn-token')}-w2`;

const dbhostUrl = () => process.env.TEST_DBHOST_URL!;
const secretKey = () => Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex');

async function dbhostCalls(fragment = ''): Promise<DbhostCall[]> {
  const calls = (await (await fetch(`${dbhostUrl()}/__calls`)).json()) as DbhostCall[];
  return calls.filter((c) => c.path.includes(fragment));
}

/** Every run this file starts (org A unless noted): the secret checks read all of them back. */
const started: Array<{ id: string; token: string }> = [];

async function start(type: string, initialData: Record<string, unknown>, token = stackEnv.tokenA): Promise<string> {
  const id = await startRun(type, initialData, token);
  started.push({ id, token });
  return id;
}

async function createConnection(body: Record<string, unknown>, token = stackEnv.tokenA): Promise<string> {
  const res = await api('/api/connections', { token, body });
  expect(res.status).toBe(201);
  expect(JSON.stringify(res.body)).not.toContain(JSON.stringify((body.secrets as Record<string, unknown>).api_token));
  return res.body.connection_uuid;
}

const history = async (id: string, token = stackEnv.tokenA) => (await api(`/api/workflows/${id}/history`, { token })).body.transitions as any[];
const steps = (transitions: any[]) => transitions.map((t) => [t.seq, t.from, t.action, t.to]);

describe('database-host workflow types', () => {
  const conn = { ok: '', stale: '', esign: '', orgB: '' };
  let waitInput: (project: string, op: string, extra?: Record<string, unknown>) => Record<string, unknown>;

  beforeAll(async () => {
    conn.ok = await createConnection({
      plugin: 'dbhost',
      name: uniqueId('dbhost-prod'),
      secrets: { api_token: DBHOST_VALID_TOKEN },
      config: { api_url: dbhostUrl() },
    });
    conn.stale = await createConnection({
      plugin: 'dbhost',
      name: uniqueId('dbhost-stale'),
      secrets: { api_token: WRONG_TOKEN },
      config: { api_url: dbhostUrl() },
    });
    conn.esign = await createConnection({
      plugin: 'esign',
      name: uniqueId('esign'),
      secrets: { api_token: ESIGN_CONNECTION_TOKEN },
      config: { base_url: stackEnv.esignUrl },
    });
    conn.orgB = await createConnection(
      { plugin: 'dbhost', name: uniqueId('dbhost-b'), secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: dbhostUrl() } },
      stackEnv.tokenB,
    );
    waitInput = (project, op, extra = {}) => ({
      connection_uuid: conn.ok,
      dbhost_project_id: project,
      dbhost_operation_id: op,
      timeout_seconds: 30,
      poll_interval: 1,
      ...extra,
    });
  });

  describe('catalog and prerequisites', () => {
    it('both types are listed with has_prerequisites true and their kinds', async () => {
      const res = await api('/api/workflows/types?prefix=dbhost');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        types: [
          { workflow_type: WAIT, version: '1.0', kind: 'Linear', description: expect.any(String), has_prerequisites: true },
          { workflow_type: LIST, version: '1.0', kind: 'Atomic', description: expect.any(String), has_prerequisites: true },
        ],
        namespaces: [{ name: 'dbhost', count: 2 }],
      });
      const schema = (await api(`/api/workflows/types/${WAIT}/schema`)).body;
      expect(schema.has_prerequisites).toBe(true);
      expect(schema.input_schema.required.sort()).toEqual(['connection_uuid', 'dbhost_operation_id', 'dbhost_project_id']);
      expect(schema.input_schema.properties.connection_uuid.format).toBe('uuid');
      expect(schema.input_schema.properties.timeout_seconds).toMatchObject({ type: 'integer', minimum: 1, maximum: 600, default: 120 });
      expect(schema.input_schema.properties.poll_interval).toMatchObject({ type: 'integer', minimum: 1, maximum: 30, default: 5 });
      expect(Object.keys(schema.output_schema.properties)).toEqual(
        expect.arrayContaining(['operation_status', 'poll_count', 'started_at_epoch', 'failure_reason', 'failed_action']),
      );
      const definition = (await api(`/api/workflows/types/${WAIT}`)).body;
      expect(definition.transitions).toEqual([
        { from: 'PENDING', action: 'start', to: 'WAITING_FOR_OPERATION' },
        { from: 'WAITING_FOR_OPERATION', action: 'poll', to: 'WAITING_FOR_OPERATION' },
        { from: 'WAITING_FOR_OPERATION', action: 'finish', to: 'COMPLETED' },
        { from: 'WAITING_FOR_OPERATION', action: 'timeout', to: 'FAILED' },
        { from: '*', action: 'fail', to: 'FAILED' },
      ]);
      expect((await api(`/api/workflows/types/${LIST}/schema`)).body.input_schema.required.sort()).toEqual(['connection_uuid', 'dbhost_project_id']);
    });

    it("the prerequisites list the caller's own dbhost connections only", async () => {
      for (const type of [WAIT, LIST]) {
        const a = await api(`/api/workflows/types/${type}/prerequisites`);
        expect(a.status).toBe(200);
        expect(a.body).toMatchObject({ workflow_type: type, satisfied: true });
        expect(a.body.required).toHaveLength(1);
        expect(a.body.required[0]).toMatchObject({ plugin: 'dbhost', fields: ['api_token', 'api_url?'] });
        expect(a.body.required[0].connections).toEqual(expect.arrayContaining([conn.ok, conn.stale]));
        expect(a.body.required[0].connections).not.toContain(conn.esign);
        expect(a.body.required[0].connections).not.toContain(conn.orgB);
        const b = await api(`/api/workflows/types/${type}/prerequisites`, { token: stackEnv.tokenB });
        expect(b.body.required[0].connections).toContain(conn.orgB);
        expect(b.body.required[0].connections).not.toContain(conn.ok);
      }
    });
  });

  describe('input validation: a 422 naming the field, and nothing starts', () => {
    let token: string;

    beforeAll(() => {
      // A fresh organization: no connections (its prerequisites are unmet) and its run list is what this block started.
      token = freshOrgToken('dbhost-validation');
    });

    const runCount = async () => (await api(`/api/workflows?limit=100`, { token })).body.runs.length as number;

    async function rejected(type: string, initialData: Record<string, unknown>) {
      const before = await runCount();
      const res = await api('/api/workflows/start', { token, body: { workflow_type: type, initial_data: initialData } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(await runCount()).toBe(before);
      return res.body.error.details as Array<{ field: string; rule: string; message: string }>;
    }

    const valid = () => ({
      connection_uuid: '1b4e28ba-2fa1-41d2-883f-0016d3cca427',
      dbhost_project_id: 'floral-king-961888',
      dbhost_operation_id: 'a07f8772-1877-4da9-a939-3a3ae62d1d8d',
    });

    it('a value over its cap names the cap', async () => {
      expect(await rejected(WAIT, { ...valid(), timeout_seconds: 601 })).toEqual([
        { field: 'initial_data.timeout_seconds', rule: 'maximum', message: 'must be at most 600 (the cap of timeout_seconds)' },
      ]);
      expect(await rejected(WAIT, { ...valid(), poll_interval: 31 })).toEqual([
        { field: 'initial_data.poll_interval', rule: 'maximum', message: 'must be at most 30 (the cap of poll_interval)' },
      ]);
      const both = await rejected(WAIT, { ...valid(), timeout_seconds: 3600, poll_interval: 60 });
      expect(both.map((d) => [d.field, d.rule]).sort()).toEqual([
        ['initial_data.poll_interval', 'maximum'],
        ['initial_data.timeout_seconds', 'maximum'],
      ]);
    });

    it('integers ≥ 1 only; connection_uuid must be a UUID; ids cannot leave their path segment; required and unknown fields', async () => {
      expect(await rejected(WAIT, { ...valid(), timeout_seconds: 0 })).toEqual([
        { field: 'initial_data.timeout_seconds', rule: 'minimum', message: 'must be at least 1' },
      ]);
      expect((await rejected(WAIT, { ...valid(), poll_interval: 2.5 }))[0]).toMatchObject({ field: 'initial_data.poll_interval', message: 'must be a whole number of seconds' });
      expect((await rejected(WAIT, { ...valid(), poll_interval: '5' }))[0]).toMatchObject({ field: 'initial_data.poll_interval' });
      for (const type of [WAIT, LIST]) {
        const details = await rejected(type, { ...valid(), ...(type === LIST ? { dbhost_operation_id: undefined } : {}), connection_uuid: 'prod-db' });
        expect(details).toEqual([{ field: 'initial_data.connection_uuid', rule: 'format:uuid', message: 'must be a UUID (the connection_uuid of a dbhost connection)' }]);
      }
      expect((await rejected(LIST, { connection_uuid: valid().connection_uuid, dbhost_project_id: '..' }))[0]).toMatchObject({ field: 'initial_data.dbhost_project_id' });
      expect((await rejected(WAIT, { ...valid(), dbhost_operation_id: 'a/b' }))[0]).toMatchObject({ field: 'initial_data.dbhost_operation_id' });
      expect((await rejected(WAIT, {})).map((d) => [d.field, d.rule]).sort()).toEqual([
        ['initial_data.connection_uuid', 'required'],
        ['initial_data.dbhost_operation_id', 'required'],
        ['initial_data.dbhost_project_id', 'required'],
      ]);
      expect(await rejected(LIST, { ...valid() })).toEqual([
        { field: 'initial_data.dbhost_operation_id', rule: 'unknown_field', message: 'is not a field of this schema' },
      ]);
    });

    it('the caps themselves are accepted (prerequisites unmet here: no connection in this organization)', async () => {
      const prerequisites = (await api(`/api/workflows/types/${WAIT}/prerequisites`, { token })).body;
      expect(prerequisites).toMatchObject({ satisfied: false, required: [{ plugin: 'dbhost', connections: [] }] });
      expect(prerequisites.steps.join('\n')).toContain('POST /api/connections');
      const res = await api('/api/workflows/start', {
        token,
        body: { workflow_type: WAIT, initial_data: { ...valid(), timeout_seconds: 1, poll_interval: 30 } },
      });
      expect(res.status).toBe(201);
      // timeout 1 cuts the first poll to 1 s; the connection does not exist in this organization.
      const run = await waitForTerminal(res.body.workflow_id, token);
      expect(run.state_data).toMatchObject({ timeout_seconds: 1, poll_interval: 30, failure_type: 'connection_not_found', failed_action: 'poll' });
      const capped = await api('/api/workflows/start', { token, body: { workflow_type: WAIT, initial_data: { ...valid(), timeout_seconds: 600 } } });
      expect(capped.status).toBe(201);
      started.push({ id: res.body.workflow_id, token }, { id: capped.body.workflow_id, token });
    });
  });

  describe(`${WAIT} end to end`, () => {
    it('polls every poll_interval until finished: COMPLETED with poll_count, started_at_epoch and the history of each poll', async () => {
      const project = uniqueId('floral');
      const op = uniqueId('finishes-3');
      const before = Math.floor(Date.now() / 1000);
      const id = await start(WAIT, waitInput(project, op));
      const run = await waitForTerminal(id);
      expect(run).toMatchObject({ workflow_type: WAIT, state_name: 'COMPLETED', status: 'COMPLETED', organization_uuid: stackEnv.orgA });
      expect(run.state_data).toEqual({
        ...waitInput(project, op),
        operation_status: 'finished',
        poll_count: 3,
        started_at_epoch: expect.any(Number),
      });
      expect(run.state_data.started_at_epoch).toBeGreaterThanOrEqual(before - 1);
      expect(run.state_data.started_at_epoch).toBeLessThanOrEqual(before + 5);

      const transitions = await history(id);
      expect(steps(transitions)).toEqual([
        [1, 'PENDING', 'start', 'WAITING_FOR_OPERATION'],
        [2, 'WAITING_FOR_OPERATION', 'poll', 'WAITING_FOR_OPERATION'],
        [3, 'WAITING_FOR_OPERATION', 'poll', 'WAITING_FOR_OPERATION'],
        [4, 'WAITING_FOR_OPERATION', 'poll', 'WAITING_FOR_OPERATION'],
        [5, 'WAITING_FOR_OPERATION', 'finish', 'COMPLETED'],
      ]);
      expect(transitions.slice(1, 4).map((t) => t.data)).toEqual([
        { poll_count: 1, operation_status: 'scheduling' },
        { poll_count: 2, operation_status: 'running' },
        { poll_count: 3, operation_status: 'finished' },
      ]);

      const calls = await dbhostCalls(op);
      expect(calls.map(({ method, path: p, authorization }) => [method, p, authorization])).toEqual(
        Array.from({ length: 3 }, () => ['GET', `/api/v2/projects/${project}/operations/${op}`, `Bearer ${DBHOST_VALID_TOKEN}`]),
      );
      // A durable timer of poll_interval (1 s) between reads.
      for (let i = 1; i < calls.length; i++) expect(calls[i].at - calls[i - 1].at).toBeGreaterThanOrEqual(900);

      const stream = await readStream(id);
      expect(stream.events.map((e) => e.event)).toEqual(['transition', 'transition', 'transition', 'transition', 'transition', 'completed']);
      expect(stream.events.at(-1)!.data.state_data).toEqual(run.state_data);
    });

    it('failed, error and cancelled fail the run through timeout naming the status; skipped completes — none polled until the deadline', async () => {
      const cases = [
        { kind: 'fails-2', status: 'failed', polls: 2 },
        { kind: 'errors-1', status: 'error', polls: 1 },
        { kind: 'cancelled-2', status: 'cancelled', polls: 2 },
        { kind: 'skipped-1', status: 'skipped', polls: 1 },
      ].map((c) => ({ ...c, project: uniqueId('floral'), op: uniqueId(c.kind) }));
      const ids = await Promise.all(cases.map((c) => start(WAIT, waitInput(c.project, c.op))));
      const runs = await Promise.all(ids.map((id) => waitForTerminal(id)));
      for (const [i, c] of cases.entries()) {
        const { state_data: data, status } = runs[i];
        expect(data).toMatchObject({ operation_status: c.status, poll_count: c.polls });
        expect(await dbhostCalls(c.op)).toHaveLength(c.polls);
        const actions = (await history(ids[i])).map((t) => t.action);
        if (c.status === 'skipped') {
          expect(status).toBe('COMPLETED');
          expect(data.failure_reason).toBeUndefined();
          expect(actions).toEqual(['start', 'poll', 'finish']);
          continue;
        }
        expect(status).toBe('FAILED');
        const reason = `database-host operation ${c.op} of project ${c.project} ended with status ${c.status}`;
        expect(data).toMatchObject({
          failure_reason: reason,
          failure_type: `operation_${c.status}`,
          failed_step: 'timeout',
          failed_action: 'timeout',
          failed_layer: 'provider',
          failed_at_state: 'waiting_for_operation',
          error: reason,
          error_type: `operation_${c.status}`,
        });
        expect(actions).toEqual(['start', ...Array(c.polls).fill('poll'), 'timeout']);
      }
    });

    it('an operation that never finishes fails at the deadline (timeout_seconds); a retry keeps the deadline', async () => {
      const op = uniqueId('never');
      const id = await start(WAIT, waitInput(uniqueId('floral'), op, { timeout_seconds: 3 }));
      const run = await waitForTerminal(id);
      expect(run.status).toBe('FAILED');
      const data = run.state_data;
      expect(data).toMatchObject({ operation_status: 'running', failure_type: 'timeout', failed_action: 'timeout', failed_layer: 'engine' });
      expect(data.failure_reason).toMatch(/still running after \d+ s: timeout_seconds \(3\) reached$/);
      expect(data.poll_count).toBeGreaterThanOrEqual(2);
      expect(data.poll_count).toBeLessThanOrEqual(3);
      expect(await dbhostCalls(op)).toHaveLength(data.poll_count);
      const transitions = await history(id);
      const end = Date.parse(transitions.at(-1).at) / 1000;
      expect(end - data.started_at_epoch).toBeGreaterThanOrEqual(3);
      expect(end - data.started_at_epoch).toBeLessThan(6);

      // POST /retry re-drives the waiting state's poll at once: one more read, the deadline has passed, failed again.
      const retry = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
      expect(retry.status).toBeLessThan(300);
      await waitFor('the retry to start', async () => ((await api(`/api/workflows/${id}`)).body.attempt === 2 ? true : undefined));
      const again = await waitForTerminal(id);
      expect(again).toMatchObject({ status: 'FAILED', attempt: 2 });
      expect(again.state_data).toMatchObject({ failure_type: 'timeout', poll_count: data.poll_count + 1, started_at_epoch: data.started_at_epoch });
      const after = await history(id);
      expect(after.slice(transitions.length).map((t) => [t.seq, t.action, t.attempt])).toEqual([
        [transitions.length + 1, 'poll', 2],
        [transitions.length + 2, 'timeout', 2],
      ]);
    });

    it('a poll whose provider never answers is cut at the deadline: timeout within seconds of timeout_seconds, the call abandoned', async () => {
      const project = uniqueId('hang');
      const op = uniqueId('never');
      const id = await start(WAIT, waitInput(project, op, { timeout_seconds: 3 }));
      const run = await waitForTerminal(id, stackEnv.tokenA, 20_000);
      expect(run.status).toBe('FAILED');
      const data = run.state_data;
      expect(data).toMatchObject({ poll_count: 0, failure_type: 'timeout', failed_step: 'timeout', failed_action: 'timeout', failed_layer: 'engine' });
      expect(data.failure_reason).toMatch(/still unknown after \d+ s: timeout_seconds \(3\) reached$/);
      const transitions = await history(id);
      expect(transitions.map((t) => t.action)).toEqual(['start', 'poll', 'timeout']);
      const end = Date.parse(transitions.at(-1).at) / 1000;
      expect(end - data.started_at_epoch).toBeGreaterThanOrEqual(3);
      // The read gets what is left of timeout_seconds, at least READ_GRACE_SECONDS: not the provider's retry budget.
      expect(end - data.started_at_epoch).toBeLessThan(3 + READ_GRACE_SECONDS + 1);
      // The abandoned call is not retried after the run failed.
      const calls = (await dbhostCalls(op)).length;
      expect(calls).toBeGreaterThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await dbhostCalls(op)).toHaveLength(calls);
    });

    it('a stale token (401) fails the first poll without retrying: unauthorized, failed_action poll', async () => {
      const op = uniqueId('finishes-1');
      const id = await start(WAIT, { ...waitInput(uniqueId('floral'), op), connection_uuid: conn.stale });
      const run = await waitForTerminal(id);
      expect(run.state_data).toMatchObject({
        failure_type: 'unauthorized',
        failure_reason: 'database-host API answered HTTP 401: authentication required',
        failed_step: 'poll',
        failed_action: 'poll',
        failed_at_state: 'waiting_for_operation',
        poll_count: 0,
      });
      await new Promise((r) => setTimeout(r, 700));
      expect((await dbhostCalls(op)).map((c) => c.authorization)).toEqual([`Bearer ${WRONG_TOKEN}`]);
    });
  });

  describe(`${LIST} end to end`, () => {
    it('completes with the provider endpoints exactly as returned', async () => {
      const project = uniqueId('floral');
      const id = await start(LIST, { connection_uuid: conn.ok, dbhost_project_id: project });
      const run = await waitForTerminal(id);
      expect(run).toMatchObject({ workflow_type: LIST, status: 'COMPLETED', state_name: 'COMPLETED' });
      expect(run.state_data).toEqual({ connection_uuid: conn.ok, dbhost_project_id: project, endpoints: doubleEndpoints(project) });
      expect(run.state_data.endpoints.map((e: any) => [e.type, e.current_state])).toEqual([
        ['read_write', 'active'],
        ['read_only', 'idle'],
      ]);
      expect(steps(await history(id))).toEqual([[1, 'PENDING', 'execute', 'COMPLETED']]);
      expect((await dbhostCalls(project)).map((c) => [c.path, c.authorization])).toEqual([
        [`/api/v2/projects/${project}/endpoints`, `Bearer ${DBHOST_VALID_TOKEN}`],
      ]);
    });

    it('401 and 404 are not retried, with failure_type saying which; 500 then 200 is retried and completes', async () => {
      const unauthorized = uniqueId('floral');
      const missing = uniqueId('missing');
      const flaky = uniqueId('flaky');
      const [a, b, c] = await Promise.all([
        start(LIST, { connection_uuid: conn.stale, dbhost_project_id: unauthorized }),
        start(LIST, { connection_uuid: conn.ok, dbhost_project_id: missing }),
        start(LIST, { connection_uuid: conn.ok, dbhost_project_id: flaky }),
      ]);
      const [ra, rb, rc] = await Promise.all([waitForTerminal(a), waitForTerminal(b), waitForTerminal(c)]);
      expect(ra.state_data).toMatchObject({
        failure_type: 'unauthorized',
        failure_reason: 'database-host API answered HTTP 401: authentication required',
        failed_action: 'execute',
        failed_at_state: 'pending',
      });
      expect(rb.state_data).toMatchObject({ failure_type: 'not_found', failure_reason: 'database-host API answered HTTP 404: project not found', failed_action: 'execute' });
      expect(rc).toMatchObject({ status: 'COMPLETED', state_data: { endpoints: doubleEndpoints(flaky) } });
      // Past the first backoff (500 ms): the 4xx runs were still called exactly once.
      await new Promise((r) => setTimeout(r, 700));
      expect(await dbhostCalls(unauthorized)).toHaveLength(1);
      expect(await dbhostCalls(missing)).toHaveLength(1);
      const flakyCalls = await dbhostCalls(flaky);
      expect(flakyCalls).toHaveLength(2);
      expect(flakyCalls[1].at - flakyCalls[0].at).toBeGreaterThanOrEqual(400);
      expect((await history(a)).map((t) => [t.action, t.to])).toEqual([['fail', 'FAILED']]);
    });
  });

  describe('connections resolve only in the run organization and through the dbhost plugin', () => {
    it.each([
      ['an esign connection', 'esign', 'connection_plugin_mismatch', 'is a esign connection; this workflow type needs a dbhost connection'],
      ["another organization's connection", 'orgB', 'connection_not_found', 'does not exist in this organization'],
    ] as const)('%s fails both types closed, with zero calls reaching the double', async (_, which, type, reason) => {
      const project = uniqueId('floral');
      const op = uniqueId('finishes-1');
      const before = (await dbhostCalls()).length;
      const ids = [
        await start(WAIT, { ...waitInput(project, op), connection_uuid: conn[which] }),
        await start(LIST, { connection_uuid: conn[which], dbhost_project_id: project }),
      ];
      for (const [i, id] of ids.entries()) {
        const run = await waitForTerminal(id);
        expect(run.status).toBe('FAILED');
        expect(run.state_data).toMatchObject({ failure_type: type, failed_action: i === 0 ? 'poll' : 'execute', failed_layer: 'activity' });
        expect(run.state_data.failure_reason).toBe(`connection ${conn[which]} ${reason}`);
      }
      await new Promise((r) => setTimeout(r, 500));
      expect(await dbhostCalls(project)).toEqual([]);
      expect((await dbhostCalls()).length).toBe(before);
    });

    it("organization B's own connection works for organization B", async () => {
      const project = uniqueId('floral');
      const id = await start(LIST, { connection_uuid: conn.orgB, dbhost_project_id: project }, stackEnv.tokenB);
      const run = await waitForTerminal(id, stackEnv.tokenB);
      expect(run).toMatchObject({ status: 'COMPLETED', organization_uuid: stackEnv.orgB, state_data: { endpoints: doubleEndpoints(project) } });
      expect((await api(`/api/workflows/${id}`)).status).toBe(404);
    });
  });

  describe('a worker killed mid-wait', () => {
    let down = false;
    afterAll(async () => {
      if (down) await control('start');
    });

    it('loses no poll, and the deadline still holds', async () => {
      // R1 polls every 2 s and finishes on its 5th read; R2's first poll is due at 7 s, its deadline at 9 s.
      const r1 = { project: uniqueId('floral'), op: uniqueId('finishes-5') };
      const r2 = { project: uniqueId('floral'), op: uniqueId('never') };
      const id1 = await start(WAIT, waitInput(r1.project, r1.op, { poll_interval: 2 }));
      const id2 = await start(WAIT, waitInput(r2.project, r2.op, { poll_interval: 7, timeout_seconds: 9 }));
      // Right after R1's second read the worker dies, while both runs sleep on their timers.
      await waitFor('two reads of R1', async () => ((await dbhostCalls(r1.op)).length >= 2 ? true : undefined), 20_000, 50);
      await new Promise((r) => setTimeout(r, 300));
      await control('kill');
      down = true;
      const killedAt = Date.now();
      expect(await dbhostCalls(r2.op)).toHaveLength(0);
      // Down past R1's next poll and past R2's first poll and deadline.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(await dbhostCalls(r1.op)).toHaveLength(2);
      await control('start');
      down = false;

      const [run1, run2] = [await waitForTerminal(id1), await waitForTerminal(id2)];
      expect(run1.status).toBe('COMPLETED');
      expect(run1.state_data).toMatchObject({ operation_status: 'finished', poll_count: 5 });
      const calls1 = await dbhostCalls(r1.op);
      expect(calls1).toHaveLength(5);
      expect(calls1.filter((c) => c.at > killedAt)).toHaveLength(3);
      const h1 = await history(id1);
      expect(h1.map((t) => [t.seq, t.action])).toEqual([
        [1, 'start'],
        [2, 'poll'],
        [3, 'poll'],
        [4, 'poll'],
        [5, 'poll'],
        [6, 'poll'],
        [7, 'finish'],
      ]);
      expect(h1.slice(1, 6).map((t) => t.data.poll_count)).toEqual([1, 2, 3, 4, 5]);

      // R2's deadline passed while the worker was down: its first poll after the restart fails it.
      expect(run2.status).toBe('FAILED');
      expect(run2.state_data).toMatchObject({ failure_type: 'timeout', poll_count: 1, operation_status: 'running' });
      expect(await dbhostCalls(r2.op)).toHaveLength(1);
      expect((await history(id2)).map((t) => t.action)).toEqual(['start', 'poll', 'timeout']);
    });
  });

  describe('started with the Temporal client directly', () => {
    let connection: Connection;
    let client: Client;
    beforeAll(async () => {
      connection = await Connection.connect({ address: stackEnv.temporalAddress });
      client = new Client({ connection, dataConverter: createDataConverter(secretKey()) });
    });
    afterAll(async () => {
      await connection?.close();
    });

    it('both types run and are projected like API-started runs', async () => {
      const project = uniqueId('floral');
      const op = uniqueId('finishes-2');
      const waitId = `wf_direct_${uniqueId('dbhost_wait').replace(/-/g, '_')}`;
      const listId = `wf_direct_${uniqueId('dbhost_list').replace(/-/g, '_')}`;
      const input = (initial_data: Record<string, unknown>): EngineWorkflowInput => ({ organization_uuid: stackEnv.orgA, initial_data });
      const [waitHandle, listHandle] = await Promise.all([
        client.workflow.start(dbhostOperationsWait, { taskQueue: TASK_QUEUE, workflowId: waitId, args: [input(waitInput(project, op))] }),
        client.workflow.start(dbhostEndpointsList, { taskQueue: TASK_QUEUE, workflowId: listId, args: [input({ connection_uuid: conn.ok, dbhost_project_id: project })] }),
      ]);
      started.push({ id: waitId, token: stackEnv.tokenA }, { id: listId, token: stackEnv.tokenA });
      const [waited, listed] = await Promise.all([waitHandle.result(), listHandle.result()]);
      expect(waited).toEqual({ ...waitInput(project, op), operation_status: 'finished', poll_count: 2, started_at_epoch: expect.any(Number) });
      expect(listed).toEqual({ connection_uuid: conn.ok, dbhost_project_id: project, endpoints: doubleEndpoints(project) });
      const [waitRun, listRun] = [await waitForTerminal(waitId), await waitForTerminal(listId)];
      expect(waitRun).toMatchObject({ workflow_type: WAIT, status: 'COMPLETED', organization_uuid: stackEnv.orgA, state_data: waited });
      expect(listRun).toMatchObject({ workflow_type: LIST, status: 'COMPLETED', state_data: listed });
      expect((await history(waitId)).map((t) => t.action)).toEqual(['start', 'poll', 'poll', 'finish']);
      // Another organization cannot read them.
      expect((await api(`/api/workflows/${waitId}`, { token: stackEnv.tokenB })).status).toBe(404);
    });
  });

  describe('no secret anywhere', () => {
    it('the api_tokens are in no response, history, stream, Temporal history (decoded) or log line', async () => {
      const secrets = { DBHOST_VALID_TOKEN, WRONG_TOKEN, ESIGN_CONNECTION_TOKEN };
      // The dbhost tokens were really sent to the double, so the checks below are not vacuous.
      const sent = (await dbhostCalls()).map((c) => c.authorization);
      expect(sent).toContain(`Bearer ${DBHOST_VALID_TOKEN}`);
      expect(sent).toContain(`Bearer ${WRONG_TOKEN}`);
      expect(started.length).toBeGreaterThanOrEqual(20);

      const bodies: Array<[string, string]> = [];
      for (const { id, token } of started) {
        bodies.push([`run ${id}`, JSON.stringify((await api(`/api/workflows/${id}`, { token })).body)]);
        bodies.push([`history ${id}`, JSON.stringify((await api(`/api/workflows/${id}/history`, { token })).body)]);
      }
      for (const { id, token } of started.slice(0, 8)) {
        const stream = await fetch(`${stackEnv.apiUrl}/api/workflows/${id}/stream`, {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
          signal: AbortSignal.timeout(10_000),
        }).then((r) => r.text()).catch(() => '');
        bodies.push([`stream ${id}`, stream]);
      }
      for (const token of [stackEnv.tokenA, stackEnv.tokenB]) {
        const list = (await api('/api/connections', { token })).body;
        bodies.push(['connections', JSON.stringify(list)]);
        for (const c of list.connections) bodies.push([`connection ${c.connection_uuid}`, JSON.stringify((await api(`/api/connections/${c.connection_uuid}`, { token })).body)]);
        for (const type of [WAIT, LIST]) bodies.push([`list ${type}`, JSON.stringify((await api(`/api/workflows?workflow_type=${type}&limit=100`, { token })).body)]);
      }
      expect(bodies.map(([, b]) => b).join('\n')).toContain(conn.ok);

      // Temporal's history, decoded as a holder of the key sees it (raw, it is encrypted).
      const connection = await Connection.connect({ address: stackEnv.temporalAddress });
      try {
        const client = new Client({ connection });
        const codec = EncryptionCodec.fromMasterKey(secretKey());
        for (const { id } of started.filter((s) => s.token === stackEnv.tokenA).slice(0, 12)) {
          const raw = await client.workflow.getHandle(id).fetchHistory();
          const payloads = payloadsIn(raw);
          const decoded = await codec.decode(payloads.map((p) => ({ ...p })));
          const text = [JSON.stringify(raw), ...decoded.map((p) => Buffer.from(p.data ?? []).toString('utf8'))].join('\n');
          bodies.push([`temporal history ${id}`, text]);
          expect(text).toContain('connection_uuid');
        }
      } finally {
        await connection.close();
      }

      expect(secretLeaks(secrets, bodies)).toEqual([]);

      await new Promise((r) => setTimeout(r, 1_000));
      const log = fs.readFileSync(stackEnv.logFile, 'utf8');
      expect(log).toContain(started[0].id);
      expect(secretLeaks(secrets, [['the service log', log]])).toEqual([]);
    });
  });
});

