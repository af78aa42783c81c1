import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { ConnectionStore } from '../../activities/connections';
import { createDbhostActivities, DBHOST_DEFAULT_API, dbhostApiRoot } from '../../activities/dbhost';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { findDefinition } from '../../workflows/registry';
import { initialState } from '../../workflows/runtime/definition';
import { DBHOST_VALID_TOKEN, startDbhostDouble } from '../doubles/dbhost-double';
import { dispatcherFor } from '../support/outbound';
import { openMigratedPglite } from '../support/pglite';

const WAIT = 'dbhost.operations.wait';
const LIST = 'dbhost.endpoints.list';
const CONNECTION = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

describe('dbhost definitions', () => {
  it('dbhost.operations.wait has the specified states, transitions and prerequisite', () => {
    const d = findDefinition(WAIT)!;
    expect(d).toMatchObject({ kind: 'Linear', version: '1.0', failure_stamp: 'failed_action', secret_fields: [], exposed_to_end_users: false });
    expect(initialState(d)).toBe('pending');
    expect(d.states).toEqual({
      pending: { initial: true, auto_advance: 'start' },
      waiting_for_operation: { retry_action: 'poll' },
      completed: { terminal: true, success: true },
      failed: { terminal: true },
    });
    expect(d.transitions).toEqual([
      { from: 'pending', action: 'start', to: 'waiting_for_operation' },
      { from: 'waiting_for_operation', action: 'poll', to: 'waiting_for_operation' },
      { from: 'waiting_for_operation', action: 'finish', to: 'completed' },
      { from: 'waiting_for_operation', action: 'timeout', to: 'failed' },
      { from: '*', action: 'fail', to: 'failed' },
    ]);
    expect(d.prerequisites).toEqual([{ plugin: 'dbhost', description: expect.any(String) }]);
  });

  it('dbhost.endpoints.list is Atomic: pending → execute → completed, fail from anywhere', () => {
    const d = findDefinition(LIST)!;
    expect(d).toMatchObject({ kind: 'Atomic', failure_stamp: 'failed_action', prerequisites: [{ plugin: 'dbhost' }] });
    expect(d.states).toEqual({
      pending: { initial: true, auto_advance: 'execute' },
      completed: { terminal: true, success: true },
      failed: { terminal: true },
    });
    expect(d.transitions).toEqual([
      { from: 'pending', action: 'execute', to: 'completed' },
      { from: '*', action: 'fail', to: 'failed' },
    ]);
  });

  it('wait input: defaults 120 / 5, caps 600 / 30 named in the message, integers ≥ 1, a UUID connection', () => {
    const input = findDefinition(WAIT)!.input;
    const base = { connection_uuid: CONNECTION, dbhost_project_id: 'floral-king-961888', dbhost_operation_id: 'op-1' };
    expect(input.parse(base)).toEqual({ ...base, timeout_seconds: 120, poll_interval: 5 });
    expect(input.parse({ ...base, timeout_seconds: 600, poll_interval: 30 })).toMatchObject({ timeout_seconds: 600, poll_interval: 30 });
    const messages = (value: Record<string, unknown>) => input.safeParse({ ...base, ...value }).error?.issues.map((i) => i.message);
    expect(messages({ timeout_seconds: 601 })).toEqual(['must be at most 600 (the cap of timeout_seconds)']);
    expect(messages({ poll_interval: 31 })).toEqual(['must be at most 30 (the cap of poll_interval)']);
    expect(messages({ poll_interval: 0 })).toEqual(['must be at least 1']);
    expect(messages({ timeout_seconds: 1.5 })).toEqual(['must be a whole number of seconds']);
    expect(messages({ connection_uuid: 'prod' })).toEqual(['must be a UUID (the connection_uuid of a dbhost connection)']);
    expect(messages({ dbhost_project_id: '..' })).toHaveLength(1);
    expect(messages({ dbhost_operation_id: 'a/b' })).toHaveLength(1);
    expect(messages({ dbhost_project_id: '' })).toHaveLength(1);
  });
});

describe('dbhost activities', () => {
  let database: DatabaseHandle;
  let store: ConnectionStore;
  let double: Awaited<ReturnType<typeof startDbhostDouble>>;

  beforeAll(async () => {
    database = await openMigratedPglite();
    store = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    double = await startDbhostDouble();
  });
  afterAll(async () => {
    await double?.close();
    await database?.close();
  });

  it('the API root: the connection api_url (a trailing /api/v2 or slash is not doubled), else the public host', () => {
    expect(dbhostApiRoot({})).toBe(DBHOST_DEFAULT_API);
    expect(DBHOST_DEFAULT_API).toBe('https://console.neon.tech');
    expect(dbhostApiRoot({ api_url: 'https://db.example.com/' })).toBe('https://db.example.com');
    expect(dbhostApiRoot({ api_url: 'https://db.example.com/api/v2/' })).toBe('https://db.example.com');
    expect(dbhostApiRoot({ api_url: 'https://db.example.com/proxy' })).toBe('https://db.example.com/proxy');
  });

  it('reads the operation status with the connection token, resolved inside the run organization', async () => {
    const row = (await store.create('org_u', 'dbhost', 'prod', { api_token: DBHOST_VALID_TOKEN }, { api_url: double.url }))!;
    const activities = createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]), connections: store });
    const req = { organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'floral-1', dbhost_operation_id: 'finishes-2-u' };
    expect(await activities.dbhostGetOperation(req)).toEqual({ status: 'scheduling' });
    expect(await activities.dbhostGetOperation(req)).toEqual({ status: 'finished' });
    const elsewhere = await activities.dbhostGetOperation({ ...req, organization_uuid: 'org_other' }).catch((e) => e);
    expect(elsewhere).toBeInstanceOf(ApplicationFailure);
    expect(elsewhere).toMatchObject({ type: 'connection_not_found', nonRetryable: true });
    expect(double.calls.filter((c) => c.path.includes('finishes-2-u'))).toHaveLength(2);
  });

  it('an http api_url outside ALLOW_HTTP_HOSTS fails before any call; a 4xx carries no provider body', async () => {
    const row = (await store.create('org_u', 'dbhost', 'plain-http', { api_token: DBHOST_VALID_TOKEN }, { api_url: double.url }))!;
    const activities = createDbhostActivities({ allowHttpHosts: [], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]), connections: store });
    const before = double.calls.length;
    const err = await activities.dbhostListEndpoints({ organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'p' }).catch((e) => e);
    expect(err).toMatchObject({ type: 'https_required', nonRetryable: true, message: expect.stringMatching(/^connection api_url must use https/) });
    expect(double.calls.length).toBe(before);

    const allowed = createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]), connections: store });
    const missing = await allowed.dbhostListEndpoints({ organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'missing-u' }).catch((e) => e);
    expect(missing).toMatchObject({ type: 'not_found', nonRetryable: true, message: 'database-host API answered HTTP 404: project not found' });
    expect((missing as ApplicationFailure).details ?? []).toEqual([]);
    const down = await allowed.dbhostListEndpoints({ organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'down-u' }).catch((e) => e);
    expect(down).toMatchObject({ type: 'server_error', nonRetryable: false });
  });

  it('a project or operation id that is a dot segment (a direct start past the schema) is refused for good before any call', async () => {
    const row = (await store.create('org_u', 'dbhost', 'dots', { api_token: DBHOST_VALID_TOKEN }, { api_url: double.url }))!;
    const activities = createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]), connections: store });
    const req = { organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'p', dbhost_operation_id: 'o' };
    const before = double.calls.length;
    await expect(activities.dbhostListEndpoints({ ...req, dbhost_project_id: '..' })).rejects.toMatchObject({ type: 'invalid_input', nonRetryable: true });
    await expect(activities.dbhostGetOperation({ ...req, dbhost_operation_id: '.' })).rejects.toMatchObject({ type: 'invalid_input', nonRetryable: true });
    expect(double.calls.length).toBe(before);
  });

  it('an answer without operation.status or endpoints is invalid_response, not retried', async () => {
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello": "world"}'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const row = (await store.create('org_u', 'dbhost', 'elsewhere', { api_token: 't' }, { api_url: url }))!;
      const activities = createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([url]), connections: store });
      const req = { organization_uuid: 'org_u', connection_uuid: row.connectionUuid, dbhost_project_id: 'p', dbhost_operation_id: 'o' };
      await expect(activities.dbhostGetOperation(req)).rejects.toMatchObject({ type: 'invalid_response', nonRetryable: true });
      await expect(activities.dbhostListEndpoints(req)).rejects.toMatchObject({ type: 'invalid_response', nonRetryable: true });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
