import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../../activities/payload-codec';
import { esignGetResourceInformation, TASK_QUEUE, type EngineWorkflowInput } from '../../workflows';
import { findUnstorableText } from '../../workflows/runtime/storable-text';
import { api, type ApiResponse, freshOrg, readStream, stackEnv, uniqueId, waitForTerminal } from '../support/api';
import { TEST_PROVIDER_HOST } from '../support/outbound';

/**
 * Part A of the attacker's report (README, Security, "Hostile input"): input that used to answer
 * 500 or leave a run stuck for good. Each attack is refused with a 4xx naming the field and the
 * rule and stores nothing, or, where it comes from a provider or a direct Temporal start, ends
 * the run normally with nothing ill-formed stored. All of it in an organization of its own, so
 * "nothing stored" is an empty list.
 */
jest.setTimeout(60_000);

const RESOURCES = 'esign.resources.get-resource-information';
const WELL_FORMED_MESSAGE = 'must be well-formed Unicode (no lone surrogate, U+D800 to U+DFFF without its pair)';

/** JSON text nested `levels` deep, written by hand: JSON.stringify itself recurses. */
const deepObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const deepArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** A list cursor as the endpoint writes one, around a forged time. */
const cursorAt = (time: string) => Buffer.from(`${time}|wf_forged`).toString('base64url');

let org: { organization_uuid: string; token: string };
const as = <T = any>(p: string, options: Parameters<typeof api>[1] = {}): Promise<ApiResponse<T>> => api<T>(p, { token: org.token, ...options });
const runsStored = async () => (await as('/api/workflows?limit=100')).body.runs;
const connectionsStored = async () => (await as('/api/connections')).body.connections;

function expectRefused(res: ApiResponse, status: number, problem: { field: string; rule: string }) {
  expect({ status: res.status, code: res.body?.error?.code, details: res.body?.error?.details }).toEqual({
    status,
    code: status === 422 ? 'validation_failed' : expect.any(String),
    details: [{ ...problem, message: expect.any(String) }],
  });
}

const startBody = (initialData: string) => `{"workflow_type":"${RESOURCES}","initial_data":${initialData}}`;
const resourcesData = (extra: string) => `{"base_url":"https://esign.invalid/api",${extra}}`;

beforeAll(() => {
  org = freshOrg('hostile');
});

afterAll(() => {
  // No attack may have reached a handler as an unexpected error.
  const log = fs.readFileSync(stackEnv.logFile, 'utf8');
  expect(log).not.toMatch(/Maximum call stack size exceeded|invalid input syntax for type json/);
});

describe('JSON nested far past the depth limit', () => {
  it('objects 5,000 deep in initial_data: 422 max_depth on initial_data, no run', async () => {
    const res = await as('/api/workflows/start', { rawBody: startBody(resourcesData(`"deep":${deepObjects(5_000)}`)) });
    expectRefused(res, 422, { field: 'initial_data', rule: 'max_depth' });
    expect(await runsStored()).toEqual([]);
  });

  it('arrays 5,000 deep in initial_data: 422 max_depth on initial_data, no run', async () => {
    const res = await as('/api/workflows/start', { rawBody: startBody(resourcesData(`"deep":${deepArrays(5_000)}`)) });
    expectRefused(res, 422, { field: 'initial_data', rule: 'max_depth' });
    expect(await runsStored()).toEqual([]);
  });

  it('a whole body of arrays 500,000 deep (just under the 1 MiB body limit): 422 max_depth, no run', async () => {
    const res = await as('/api/workflows/start', { rawBody: deepArrays(500_000) });
    expectRefused(res, 422, { field: '0', rule: 'max_depth' });
    expect(await runsStored()).toEqual([]);
  });

  it('objects 5,000 deep in a new connection\'s secrets: 422 max_depth on secrets, no connection', async () => {
    const res = await as('/api/connections', { rawBody: `{"plugin":"esign","name":"deep","secrets":${deepObjects(5_000)}}` });
    expectRefused(res, 422, { field: 'secrets', rule: 'max_depth' });
    expect(await connectionsStored()).toEqual([]);
  });

  it('arrays 5,000 deep in a connection update\'s config: 422 max_depth on config, the connection unchanged', async () => {
    const created = await as('/api/connections', { body: { plugin: 'dbhost', name: uniqueId('deep-config'), secrets: { api_token: 't' } } });
    expect(created.status).toBe(201);
    const before = (await as(`/api/connections/${created.body.connection_uuid}`)).body;
    const res = await as(`/api/connections/${created.body.connection_uuid}`, { method: 'PATCH', rawBody: `{"config":${deepArrays(5_000)}}` });
    expectRefused(res, 422, { field: 'config', rule: 'max_depth' });
    expect((await as(`/api/connections/${created.body.connection_uuid}`)).body).toEqual(before);
    expect((await as(`/api/connections/${created.body.connection_uuid}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('JSON 5,000 deep beside the payloads of a codec request: 422 max_depth on payloads', async () => {
    const res = await as('/api/temporal-codec/encode', { rawBody: `{"payloads":[{"metadata":{},"data":"","extra":${deepObjects(5_000)}}]}` });
    expectRefused(res, 422, { field: 'payloads', rule: 'max_depth' });
  });

  // Queries stay 2,000 levels deep: a longer URL would pass Node's 16 KiB header limit (431).
  it('JSON 2,000 deep as a query value: 422 naming the parameter, no 5xx', async () => {
    const res = await as(`/api/workflows?state_name=${encodeURIComponent(deepArrays(2_000))}`);
    expectRefused(res, 422, { field: 'state_name', rule: 'maximum' });
  });

  it('a query key in bracket notation 2,000 levels deep: 422 unknown_field (queries are never parsed into objects)', async () => {
    const key = `a${'[b]'.repeat(2_000)}`;
    const res = await as(`/api/workflows?${key}=1`);
    expectRefused(res, 422, { field: key, rule: 'unknown_field' });
  });
});

describe('keys that name what every object inherits', () => {
  // Nest's validation pipe deletes them unseen: a strict schema passed, and data kept for the caller lost them.
  it.each(['__proto__', 'constructor', 'prototype'])('%s in initial_data, however deep: 422 reserved_key naming it, no run', async (key) => {
    const res = await as('/api/workflows/start', { rawBody: startBody(resourcesData(`"meta":{"list":[{"${key}":{"polluted":true}}]}`)) });
    expectRefused(res, 422, { field: `initial_data.meta.list.0.${key}`, rule: 'reserved_key' });
    expect(await runsStored()).toEqual([]);
  });

  it("__proto__ in a new connection's secrets: 422 reserved_key, no connection", async () => {
    const res = await as('/api/connections', { rawBody: '{"plugin":"dbhost","name":"proto","secrets":{"api_token":"t","__proto__":{"x":1}}}' });
    expectRefused(res, 422, { field: 'secrets.__proto__', rule: 'reserved_key' });
    expect(await connectionsStored()).toEqual([]);
  });
});

describe('forged list cursors', () => {
  const entitlementCursorAt = (time: string) => Buffer.from(`${time}|00000000-0000-4000-8000-000000000000`).toString('base64url');
  it.each([
    ['a year before 0001 (-010000-01-01)', '-010000-01-01T00:00:00.000Z'],
    ['the last day JavaScript can hold (+275760-09-13)', '+275760-09-13T00:00:00.000Z'],
    ['year 0000, which Postgres does not have', '0000-01-01T00:00:00.000Z'],
  ])('a cursor dated %s: 400 invalid_cursor, for runs and entitlements', async (_, time) => {
    for (const path of [`/api/workflows?cursor=${cursorAt(time)}`, `/api/entitlements?cursor=${entitlementCursorAt(time)}`]) {
      const res = await as(path);
      expectRefused(res, 400, { field: 'cursor', rule: 'invalid_cursor' });
      expect(res.body.error.code).toBe('invalid_cursor');
    }
  });
});

describe('a webhook body Postgres text cannot hold', () => {
  it('a NUL character: 422 no_nul_character naming the body, no event stored', async () => {
    const created = await as('/api/hooks/endpoints', { body: { name: uniqueId('nul'), target_url: `${stackEnv.esignUrl}/hook` } });
    expect(created.status).toBe(201);
    const res = await fetch(`${stackEnv.apiUrl}/api/hooks/r/${created.body.endpoint_uuid}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a\u0000b' });
    expectRefused({ status: res.status, body: await res.json(), headers: res.headers }, 422, { field: 'body', rule: 'no_nul_character' });
    expect((await as(`/api/hooks/endpoints/${created.body.endpoint_uuid}/events`)).body.events).toEqual([]);
  });
});

describe('lone surrogates (valid JSON escapes Postgres jsonb refuses)', () => {
  it('in an initial_data value: 422 well_formed_unicode naming the field, no run', async () => {
    const res = await as('/api/workflows/start', { body: { workflow_type: RESOURCES, initial_data: { base_url: 'https://esign.invalid/api\ud800' } } });
    expectRefused(res, 422, { field: 'initial_data.base_url', rule: 'well_formed_unicode' });
    expect(res.body.error.details[0].message).toBe(WELL_FORMED_MESSAGE);
    expect(await runsStored()).toEqual([]);
  });

  it('in an initial_data key: 422 well_formed_unicode with the key escaped, no run', async () => {
    const res = await as('/api/workflows/start', {
      body: { workflow_type: RESOURCES, initial_data: { base_url: 'https://esign.invalid/api', ['x\udc00']: 1 } },
    });
    expectRefused(res, 422, { field: 'initial_data.x\\udc00', rule: 'well_formed_unicode' });
    expect(await runsStored()).toEqual([]);
  });

  it('in a new connection\'s secret: 422 well_formed_unicode, no connection', async () => {
    const res = await as('/api/connections', { body: { plugin: 'esign', name: 'surrogate', secrets: { api_token: 'tok\ud83d' } } });
    expectRefused(res, 422, { field: 'secrets.api_token', rule: 'well_formed_unicode' });
    expect(await connectionsStored()).toEqual([]);
  });

  it('in a connection update\'s config key: 422 well_formed_unicode, the connection unchanged', async () => {
    const created = await as('/api/connections', { body: { plugin: 'dbhost', name: uniqueId('surrogate-config'), secrets: { api_token: 't' } } });
    expect(created.status).toBe(201);
    const before = (await as(`/api/connections/${created.body.connection_uuid}`)).body;
    const res = await as(`/api/connections/${created.body.connection_uuid}`, { method: 'PATCH', body: { config: { ['\ud800api_url']: 'x' } } });
    expectRefused(res, 422, { field: 'config.\\ud800api_url', rule: 'well_formed_unicode' });
    expect((await as(`/api/connections/${created.body.connection_uuid}`)).body).toEqual(before);
    expect((await as(`/api/connections/${created.body.connection_uuid}`, { method: 'DELETE' })).status).toBe(204);
  });

  describe('arriving from a provider answer', () => {
    let provider: http.Server;
    let baseUrl: string;
    beforeAll(async () => {
      // The provider's raw JSON text: the escapes reach the worker's JSON.parse as they are.
      provider = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"resources":[{"name":"\\ud800","value":"/v2.1/x\\udc00"}],"\\udfffkey":"\\ud83d\\ude00"}');
      });
      await new Promise<void>((r) => provider.listen(0, TEST_PROVIDER_HOST, r));
      baseUrl = `http://${TEST_PROVIDER_HOST}:${(provider.address() as AddressInfo).port}/api`;
    });
    afterAll(() => new Promise((r) => provider.close(r)));

    it('is stored with U+FFFD in its place: the run completes, its history holds it, its stream ends', async () => {
      const started = await as('/api/workflows/start', { body: { workflow_type: RESOURCES, initial_data: { base_url: baseUrl } } });
      expect(started.status).toBe(201);
      const id = started.body.workflow_id;
      const run = await waitForTerminal(id, org.token, 30_000);
      const response = { resources: [{ name: '\uFFFD', value: '/v2.1/x\uFFFD' }], '\uFFFDkey': '\ud83d\ude00' };
      expect(run).toMatchObject({ status: 'COMPLETED', state_data: { status_code: 200, response } });
      const history = (await as(`/api/workflows/${id}/history`)).body;
      expect(history.transitions.map((t: any) => t.data.response)).toEqual([response]);
      const stream = await readStream(id, { token: org.token, timeoutMs: 10_000 });
      expect(stream.events.map((e) => e.event)).toEqual(['transition', 'completed']);
      expect(stream.events[1].data.state_data.response).toEqual(response);
    });
  });

  describe('in a direct Temporal start', () => {
    let connection: Connection;
    let client: Client;
    beforeAll(async () => {
      connection = await Connection.connect({ address: stackEnv.temporalAddress });
      client = new Client({ connection, dataConverter: createDataConverter(Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex')) });
    });
    afterAll(() => connection?.close());

    const directStart = async (initial_data: Record<string, unknown>) => {
      const workflowId = `wf_${uniqueId('surrogate').replace(/-/g, '_')}`;
      const input: EngineWorkflowInput = { organization_uuid: org.organization_uuid, initial_data };
      await client.workflow.start(esignGetResourceInformation, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
      return workflowId;
    };

    it.each([
      ['a value', { base_url: 'https://esign.invalid/api', api_token: 'x\ud800' }, 'initial_data.api_token'],
      ['a key', { base_url: 'https://esign.invalid/api', ['\udc00']: 'x' }, 'initial_data.\\udc00'],
    ])('carrying a lone surrogate in %s: the run fails as invalid_input naming the field, nothing ill-formed stored, the stream ends', async (_, data, field) => {
      const id = await directStart(data);
      const run = await waitForTerminal(id, org.token, 30_000);
      expect(run.state_data).toMatchObject({ failure_type: 'invalid_input', failure_reason: `${field}: ${WELL_FORMED_MESSAGE}` });
      const history = (await as(`/api/workflows/${id}/history`)).body;
      expect(history.transitions.map((t: any) => [t.action, t.to])).toEqual([['fail', 'FAILED']]);
      expect(findUnstorableText([run, history])).toBeUndefined();
      const stream = await readStream(id, { token: org.token, timeoutMs: 10_000 });
      expect(stream.events.map((e) => e.event)).toEqual(['transition', 'failed']);
      expect((await as(`/api/workflows/${id}/retry`, { method: 'POST' })).body.error.code).toBe('not_retryable');
    });
  });
});
