import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createDataConverter } from '../../activities/payload-codec';
import { esignDeleteUserAuthorization, type EngineWorkflowInput, TASK_QUEUE } from '../../workflows';
import { DBHOST_VALID_TOKEN } from '../doubles/dbhost-double';
import { ESIGN_PLATFORM_TOKEN, ESIGN_VALID_TOKEN, type EsignCall, startEsignDouble } from '../doubles/esign-double';
import { TEST_PROVIDER_HOST } from '../support/outbound';
import { api, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';

/**
 * "Where each credential may go" (README, Security), attacked through the running stack. The
 * worker holds ESIGN_API_TOKEN = ESIGN_PLATFORM_TOKEN for ESIGN_API_BASE_URL = a second
 * e-signature double (the platform's account, TEST_ESIGN_PLATFORM_URL). The attacker's listener
 * is one more double started here, on another loopback port: it records every request it gets.
 */
jest.setTimeout(60_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const RESOURCES = 'esign.resources.get-resource-information';
const LIST = 'dbhost.endpoints.list';

const platformUrl = () => process.env.TEST_ESIGN_PLATFORM_URL!;
const dbhostUrl = () => process.env.TEST_DBHOST_URL!;

let listener: Awaited<ReturnType<typeof startEsignDouble>>;
let temporalClient: Client;

beforeAll(async () => {
  // Started after the stack: on the address the stack lets provider calls reach on any port.
  listener = await startEsignDouble({ host: TEST_PROVIDER_HOST });
  temporalClient = new Client({
    connection: await Connection.connect({ address: stackEnv.temporalAddress }),
    dataConverter: createDataConverter(Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex')),
  });
});

afterAll(async () => {
  await temporalClient.connection.close();
  await listener.close();
});

const deleteInput = (behaviour: string, extra: Record<string, unknown>) => ({
  accountid: '1001',
  userid: 'u-1',
  authorizationid: uniqueId(behaviour),
  ...extra,
});

/** What a double at `url` was called with, read over HTTP (the stack's doubles live in the setup process). */
async function callsAt(url: string, fragment: string): Promise<EsignCall[]> {
  const calls = (await (await fetch(`${new URL(url).origin}/__calls`)).json()) as EsignCall[];
  return calls.filter((c) => c.path.includes(fragment));
}

async function createConnection(body: Record<string, unknown>) {
  const res = await api('/api/connections', { body: { name: uniqueId(String(body.plugin)), ...body } });
  expect(res.status).toBe(201);
  return res.body.connection_uuid as string;
}

async function startDirect(workflow: typeof esignDeleteUserAuthorization, initialData: Record<string, unknown>) {
  const workflowId = `wf_${uniqueId('direct').replace(/-/g, '_')}`;
  const input: EngineWorkflowInput = { organization_uuid: stackEnv.orgA, initial_data: initialData };
  await temporalClient.workflow.start(workflow, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
  return workflowId;
}

/** The spellings a leaked secret would take in a JSON document (the log, a JSON body) or an escaped one. */
const spellings = (secret: string) => {
  const escaped = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, escaped, escaped.replaceAll('/', '\\/'), JSON.stringify(escaped).slice(1, -1)])];
};

/**
 * Everywhere a run's failure goes: the run and its state_data, the history, the stream, the
 * service log and Temporal's own history read without the codec (where failure messages are in
 * clear). Returns each place a secret shows up in; an empty list is the assertion.
 */
async function leaksOf(workflowId: string, secrets: string[]): Promise<string[]> {
  const history = await temporalClient.workflow.getHandle(workflowId).fetchHistory();
  const places: Array<[string, string]> = [
    ['run', JSON.stringify((await api(`/api/workflows/${workflowId}`)).body)],
    ['history', JSON.stringify((await api(`/api/workflows/${workflowId}/history`)).body)],
    ['stream', JSON.stringify((await readStream(workflowId, { timeoutMs: 10_000 })).events)],
    ['log', fs.readFileSync(stackEnv.logFile, 'utf8')],
    ['Temporal history', Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1')],
  ];
  return places.flatMap(([place, text]) => secrets.flatMap((s) => spellings(s).filter((spelling) => text.includes(spelling)).map(() => place)));
}

/** The scrubbed answer still says what happened, in the run and in Temporal's failure message. */
async function expectScrubbedFailure(workflowId: string, failureType: string) {
  const run = await waitForTerminal(workflowId);
  expect(run.status).toBe('FAILED');
  expect(run.state_data).toMatchObject({ failure_type: failureType, error: expect.stringContaining('[redacted]') });
  const history = await temporalClient.workflow.getHandle(workflowId).fetchHistory();
  expect(Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1')).toContain('[redacted]');
  return run;
}

describe('ESIGN_API_TOKEN goes only to the origin of ESIGN_API_BASE_URL', () => {
  it('a delete at a tenant-chosen base_url, with no token of its own, fails missing_credentials and the listener receives nothing', async () => {
    const input = deleteInput('ok', { base_url: listener.url });
    const id = await startRun(DELETE, input);
    const run = await waitForTerminal(id);
    expect(run.state_data).toMatchObject({ failure_type: 'missing_credentials' });
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
  });

  it('a resource listing at a tenant-chosen base_url is sent without any Authorization', async () => {
    const before = listener.calls.length;
    const id = await startRun(RESOURCES, { base_url: listener.url });
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    const calls = listener.calls.slice(before).filter((c) => c.path === '/api/v2.1');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.map((c) => c.authorization)).toEqual(calls.map(() => null));
  });

  it("the platform's host and port over another scheme is another origin: missing_credentials before any call", async () => {
    const platform = new URL(platformUrl());
    const input = deleteInput('ok', { base_url: `https://${platform.host}/api` });
    const run = await waitForTerminal(await startRun(DELETE, input));
    // Refused before the call: an attempt would have failed as unreachable (nothing speaks TLS there).
    expect(run.state_data).toMatchObject({ failure_type: 'missing_credentials' });
    expect(await callsAt(platformUrl(), input.authorizationid)).toEqual([]);
  });

  it('a direct Temporal start at a tenant-chosen base_url is refused the same way, in the activity', async () => {
    const input = deleteInput('ok', { base_url: listener.url });
    const run = await waitForTerminal(await startDirect(esignDeleteUserAuthorization, input));
    expect(run.state_data).toMatchObject({ failure_type: 'missing_credentials' });
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
  });

  it('the platform base_url, spelled differently (trailing slash), does get the platform token', async () => {
    const input = deleteInput('ok', { base_url: `${platformUrl()}/` });
    const run = await waitForTerminal(await startRun(DELETE, input));
    expect(run.status).toBe('COMPLETED');
    expect((await callsAt(platformUrl(), input.authorizationid)).map((c) => c.authorization)).toEqual([`Bearer ${ESIGN_PLATFORM_TOKEN}`]);
  });
});

describe("a connection's secret goes only to the destination stored with it", () => {
  let esignConnection: string;

  beforeAll(async () => {
    esignConnection = await createConnection({ plugin: 'esign', secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } });
  });

  const newestRun = async () => (await api(`/api/workflows?workflow_type=${DELETE}&limit=1`)).body.runs[0]?.workflow_id;

  it('a start naming the connection and a base_url of another origin is a 422 on initial_data.base_url; nothing starts or is sent', async () => {
    const before = await newestRun();
    const input = deleteInput('ok', { base_url: listener.url, connection_uuid: esignConnection });
    const res = await api('/api/workflows/start', { body: { workflow_type: DELETE, initial_data: input } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: 'initial_data.base_url', rule: 'connection_destination', message: expect.stringContaining(new URL(stackEnv.esignUrl).origin) },
    ]);
    expect(await newestRun()).toBe(before);
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
  });

  it('the same host and port over https is another origin too (resource listing): 422', async () => {
    const { host } = new URL(stackEnv.esignUrl);
    const res = await api('/api/workflows/start', {
      body: { workflow_type: RESOURCES, initial_data: { base_url: `https://${host}/api`, connection_uuid: esignConnection } },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'initial_data.base_url', rule: 'connection_destination' })]);
  });

  it('a direct Temporal start naming the connection and another origin fails connection_destination_mismatch before any call', async () => {
    const input = deleteInput('ok', { base_url: listener.url, connection_uuid: esignConnection });
    const run = await waitForTerminal(await startDirect(esignDeleteUserAuthorization, input));
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({ failure_type: 'connection_destination_mismatch' });
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
    expect(await leaksOf(run.workflow_id, [ESIGN_VALID_TOKEN])).toEqual([]);
  });

  it('a dbhost connection named as the esign connection, with a base_url of another origin, fails connection_plugin_mismatch; nothing sent', async () => {
    const dbhostConnection = await createConnection({ plugin: 'dbhost', secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: dbhostUrl() } });
    const input = deleteInput('ok', { base_url: listener.url, connection_uuid: dbhostConnection });
    const run = await waitForTerminal(await startRun(DELETE, input));
    expect(run.state_data).toMatchObject({ failure_type: 'connection_plugin_mismatch' });
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
  });

  it("a run naming the connection without base_url calls the connection's base_url with its token", async () => {
    const input = deleteInput('ok', { connection_uuid: esignConnection });
    const run = await waitForTerminal(await startRun(DELETE, input));
    expect(run.status).toBe('COMPLETED');
    expect((await callsAt(stackEnv.esignUrl, input.authorizationid)).map((c) => c.authorization)).toEqual([`Bearer ${ESIGN_VALID_TOKEN}`]);
  });

  it("PATCH moving an esign connection's base_url without secrets is a 400 secret_required; nothing changes", async () => {
    const id = await createConnection({ plugin: 'esign', secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } });
    const res = await api(`/api/connections/${id}`, { method: 'PATCH', body: { config: { base_url: listener.url } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'secret_required', details: [expect.objectContaining({ field: 'config.base_url', rule: 'secret_required' })] });
    expect((await api(`/api/connections/${id}`)).body.config).toEqual({ base_url: stackEnv.esignUrl });
    const input = deleteInput('ok', { connection_uuid: id });
    expect((await waitForTerminal(await startRun(DELETE, input))).status).toBe('COMPLETED');
    expect(listener.calls.filter((c) => c.path.includes(input.authorizationid))).toEqual([]);
  });

  it("PATCH moving a dbhost connection's api_url without secrets is a 400 secret_required; nothing changes", async () => {
    const id = await createConnection({ plugin: 'dbhost', secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: dbhostUrl() } });
    const res = await api(`/api/connections/${id}`, { method: 'PATCH', body: { name: uniqueId('renamed'), config: { api_url: new URL(listener.url).origin } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'secret_required', details: [expect.objectContaining({ field: 'config.api_url' })] });
    expect((await api(`/api/connections/${id}`)).body).toMatchObject({ config: { api_url: dbhostUrl() }, name: expect.not.stringContaining('renamed') });
  });

  it("PATCH dropping a dbhost connection's api_url (back to the provider's public API) without secrets is a 400 too", async () => {
    const id = await createConnection({ plugin: 'dbhost', secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: dbhostUrl() } });
    const res = await api(`/api/connections/${id}`, { method: 'PATCH', body: { config: {} } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('secret_required');
    expect((await api(`/api/connections/${id}`)).body.config).toEqual({ api_url: dbhostUrl() });
  });

  it('PATCH restating the same destination needs no secrets; moving it with the secrets is allowed', async () => {
    const id = await createConnection({ plugin: 'esign', secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } });
    expect((await api(`/api/connections/${id}`, { method: 'PATCH', body: { config: { base_url: `${stackEnv.esignUrl}/` } } })).status).toBe(200);
    const moved = await api(`/api/connections/${id}`, { method: 'PATCH', body: { config: { base_url: platformUrl() }, secrets: { api_token: ESIGN_PLATFORM_TOKEN } } });
    expect(moved.status).toBe(200);
    expect(moved.body.config).toEqual({ base_url: platformUrl() });
  });

  it('an esign connection must name its base_url, and one the outbound policy allows', async () => {
    const missing = await api('/api/connections', { body: { plugin: 'esign', name: uniqueId('e'), secrets: { api_token: 't' } } });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'config.base_url', rule: 'required' })]);
    const plainHttp = await api('/api/connections', {
      body: { plugin: 'esign', name: uniqueId('e'), secrets: { api_token: 't' }, config: { base_url: 'http://esign.example.com/api' } },
    });
    expect(plainHttp.status).toBe(422);
    expect(plainHttp.body.error.details).toEqual([expect.objectContaining({ field: 'config.base_url', rule: 'outbound_policy' })]);
  });
});

describe('provider answers are scrubbed of every secret of the call', () => {
  it("a 401 quoting the run's own api_token leaves it nowhere: state_data, history, stream, log, Temporal history", async () => {
    const token = uniqueId('run-token-quoted');
    const id = await startRun(DELETE, deleteInput('echo401', { base_url: stackEnv.esignUrl, api_token: token }));
    const run = await expectScrubbedFailure(id, 'unauthorized');
    expect(run.state_data).toMatchObject({ status_code: 401, response: { message: 'bad token Bearer [redacted]' } });
    expect(await leaksOf(id, [token])).toEqual([]);
  });

  it('a token with JSON-escaped characters, quoted in a text body with \\/ escapes, is cut out too', async () => {
    const token = `${uniqueId('tok')}/with"quote\\and/slashes`;
    const id = await startRun(DELETE, deleteInput('echotext401', { base_url: stackEnv.esignUrl, api_token: token }));
    const run = await waitForTerminal(id);
    // A text body gives no message: the scrubbed body is what shows.
    expect(run.state_data).toMatchObject({ failure_type: 'unauthorized', status_code: 401, response: expect.stringContaining('Bearer [redacted]') });
    expect(await leaksOf(id, [token])).toEqual([]);
  });

  it("a 401 quoting an esign connection's token leaves it nowhere", async () => {
    const token = uniqueId('conn-token-quoted');
    const connection = await createConnection({ plugin: 'esign', secrets: { api_token: token }, config: { base_url: stackEnv.esignUrl } });
    const id = await startRun(DELETE, deleteInput('echo401', { connection_uuid: connection }));
    await expectScrubbedFailure(id, 'unauthorized');
    expect(await leaksOf(id, [token])).toEqual([]);
  });

  it('a 401 quoting the platform ESIGN_API_TOKEN leaves it nowhere', async () => {
    const id = await startRun(DELETE, deleteInput('echo401', { base_url: platformUrl() }));
    await expectScrubbedFailure(id, 'unauthorized');
    expect(await leaksOf(id, [ESIGN_PLATFORM_TOKEN])).toEqual([]);
  });

  it("a database-host 401 quoting the connection's api_token leaves it out of the failure message", async () => {
    const token = uniqueId('dbhost-token-quoted');
    const connection = await createConnection({ plugin: 'dbhost', secrets: { api_token: token }, config: { api_url: dbhostUrl() } });
    const id = await startRun(LIST, { connection_uuid: connection, dbhost_project_id: uniqueId('echo401') });
    const run = await expectScrubbedFailure(id, 'unauthorized');
    expect(run.state_data.failure_reason).toBe('database-host API answered HTTP 401: bad token Bearer [redacted]');
    expect(await leaksOf(id, [token])).toEqual([]);
  });
});
