import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { DBHOST_VALID_TOKEN } from '../doubles/dbhost-double';
import { ESIGN_RESOURCES } from '../doubles/esign-double';
import { api, esignCalls, esignDeleteInput, stackEnv, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { outboundAllowFor } from '../support/outbound';
import { freePort, waitFor } from '../support/ports';

/**
 * The agent tools with the MCP SDK's own client, over both transports, against the live stack:
 * Streamable HTTP at the API's /mcp and the stdio bin (the compiled dist/src/mcp/stdio.js,
 * as package.json's bin names it) talking to the API over HTTP.
 */

jest.setTimeout(60_000);

const RESOURCES = 'esign.resources.get-resource-information';
const DELETE = 'esign.authorizations.delete-user-authorization';
const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['workflow-engine-mcp']);
const TOOLS = ['get_workflow', 'get_workflow_history', 'get_workflow_schema', 'list_workflow_types', 'retry_workflow', 'start_workflow', 'watch_workflow'];

type TransportName = 'http' | 'stdio';

function transportFor(kind: TransportName, token: string, apiUrl: string): Transport {
  if (kind === 'http') {
    return new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  }
  return new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    env: { PATH: process.env.PATH ?? '', WFE_URL: apiUrl, WFE_TOKEN: token },
    stderr: 'pipe',
  });
}

const open: Client[] = [];

async function connect(kind: TransportName, token = stackEnv.tokenA, apiUrl = stackEnv.apiUrl): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transportFor(kind, token, apiUrl));
  open.push(client);
  return client;
}

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
});

async function call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined)) as CallToolResult;
}

const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');


describe.each<TransportName>(['http', 'stdio'])('MCP over %s', (kind) => {
  let client: Client;

  beforeAll(async () => {
    client = await connect(kind);
  });

  it('lists the tools, each with a description, an input schema and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const start = tools.find((t) => t.name === 'start_workflow')!;
    expect(start.inputSchema.required).toEqual(['workflow_type', 'initial_data']);
    expect(Object.keys(start.inputSchema.properties!)).toEqual(['workflow_type', 'initial_data', 'idempotency_key']);
    expect(Object.keys(start.outputSchema!.properties!).sort()).toEqual(['is_terminal', 'replayed', 'state_name', 'workflow_id']);
  });

  it('list_workflow_types {prefix}: the types with description, kind and has_prerequisites, and the namespaces, as the API answers', async () => {
    const result = await call(client, 'list_workflow_types', { prefix: 'esign.' });
    expect(result.isError).toBeFalsy();
    const fromApi = await api('/api/workflows/types?prefix=esign.');
    expect(result.structuredContent).toEqual(fromApi.body);
    expect(fromApi.body.types.map((t: { workflow_type: string }) => t.workflow_type).sort()).toEqual([DELETE, RESOURCES]);
    expect(result.structuredContent!.namespaces).toEqual([{ name: 'esign', count: 2 }]);
    expect(text(result)).toContain(`${RESOURCES} (Atomic)`);
  });

  it('get_workflow_schema: input and output JSON Schemas and the definition (states, transitions)', async () => {
    const result = await call(client, 'get_workflow_schema', { workflow_type: RESOURCES });
    expect(result.isError).toBeFalsy();
    const schema = await api(`/api/workflows/types/${RESOURCES}/schema`);
    const definition = await api(`/api/workflows/types/${RESOURCES}`);
    expect(result.structuredContent).toEqual({ workflow_type: RESOURCES, ...schema.body, definition: definition.body });
    expect(text(result)).toContain('initial_data requires: base_url or connection_uuid;');
  });

  it('get_workflow_schema of a type with prerequisites carries the connection steps', async () => {
    const result = await call(client, 'get_workflow_schema', { workflow_type: 'dbhost.endpoints.list' });
    expect(result.isError).toBeFalsy();
    const prerequisites = await api('/api/workflows/types/dbhost.endpoints.list/prerequisites');
    expect(result.structuredContent!.has_prerequisites).toBe(true);
    expect(result.structuredContent!.prerequisites).toEqual(prerequisites.body);
  });

  it('the loop: list → schema → start (invalid, then corrected) → watch with a progress notification per transition → completed', async () => {
    const listed = await call(client, 'list_workflow_types', {});
    expect((listed.structuredContent!.types as Array<{ workflow_type: string }>).map((t) => t.workflow_type)).toContain(RESOURCES);
    expect((await call(client, 'get_workflow_schema', { workflow_type: RESOURCES })).isError).toBeFalsy();

    const invalid = await call(client, 'start_workflow', {
      workflow_type: RESOURCES,
      initial_data: { base_url: 'not a url', surprise: true },
    });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toBeUndefined();
    expect(text(invalid)).toMatch(/^start_workflow was refused and changed nothing/);
    expect(text(invalid)).toMatch(/- initial_data\.base_url: .+ \(rule: [a-z_:]+\)/);
    expect(text(invalid)).toContain('- initial_data.surprise: ');
    expect(text(invalid)).toContain('(rule: unknown_field)');

    const started = await call(client, 'start_workflow', { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl } });
    expect(started.isError).toBeFalsy();
    const { workflow_id: id, state_name, is_terminal, replayed } = started.structuredContent as Record<string, unknown>;
    expect(id).toMatch(/^wf_/);
    expect({ state_name, is_terminal, replayed }).toEqual({ state_name: 'PENDING', is_terminal: false, replayed: false });
    expect(text(started)).toContain(`watch_workflow {"workflow_id": "${id}"}`);

    const progress: Progress[] = [];
    // The SDK client drops a notification read in the same chunk as the result, reporting it as
    // an unknown token (typescript-sdk#2580): count those too, it is what the server sent.
    client.onerror = (err) => {
      const late = /progress notification for an unknown token: (.*)$/.exec(err.message);
      if (late) progress.push(JSON.parse(late[1]).params);
    };
    const watched = await call(client, 'watch_workflow', { workflow_id: id, timeout_seconds: 45 }, (p) => progress.push(p));
    client.onerror = undefined;
    expect(watched.isError).toBeFalsy();
    const outcome = watched.structuredContent as Record<string, any>;
    expect(outcome).toMatchObject({ workflow_id: id, outcome: 'completed', state_name: 'COMPLETED' });
    expect(outcome.state_data).toMatchObject({ status_code: 200, response: ESIGN_RESOURCES });
    const history = await api(`/api/workflows/${id}/history`);
    const transitions = history.body.transitions.map(({ seq, from, to, action, at }: Record<string, unknown>) => ({ seq, from, to, action, at }));
    expect(outcome.transitions).toEqual(transitions);
    expect(progress.map(({ progress: seq, message }) => ({ progress: seq, message }))).toEqual(
      transitions.map((t: Record<string, unknown>) => ({ progress: t.seq, message: `${t.from} → ${t.to} (${t.action})` })),
    );
    expect(progress.length).toBeGreaterThan(0);
  });

  it('start_workflow of an unknown type: isError naming the types under its prefix', async () => {
    const result = await call(client, 'start_workflow', { workflow_type: 'esign.resources.get-everything', initial_data: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      `start_workflow was refused: workflow type "esign.resources.get-everything" does not exist. Types under "esign.resources.": ${RESOURCES}.`,
    );
    const elsewhere = await call(client, 'start_workflow', { workflow_type: 'nothing.here', initial_data: {} });
    expect(text(elsewhere)).toMatch(/^start_workflow was refused: workflow type "nothing.here" does not exist. Types in all: .*dbhost\.endpoints\.list/);
  });

  it('start_workflow with idempotency_key: the repeated call returns the same run, replayed', async () => {
    const key = uniqueId('mcp-key');
    const args = { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl }, idempotency_key: key };
    const first = await call(client, 'start_workflow', args);
    const second = await call(client, 'start_workflow', args);
    expect(first.structuredContent!.replayed).toBe(false);
    // A replay answers with the run as it is now, which may have moved on since the first answer.
    expect(second.structuredContent).toMatchObject({ workflow_id: first.structuredContent!.workflow_id, replayed: true });
    expect(second.structuredContent!.state_name).toEqual(expect.any(String));
    const badKey = await call(client, 'start_workflow', { ...args, idempotency_key: 'has space' });
    expect(badKey.isError).toBe(true);
    expect(text(badKey)).toContain('idempotency_key');
  });

  it('a failing run and its retry: watch returns the failure with a retry hint, retry_workflow re-drives it to completion', async () => {
    const input = esignDeleteInput('once401'); // the double answers 401 once, then 204
    const started = await call(client, 'start_workflow', { workflow_type: DELETE, initial_data: input });
    const id = started.structuredContent!.workflow_id as string;

    const failed = await call(client, 'watch_workflow', { workflow_id: id });
    expect(failed.isError).toBeFalsy();
    expect(failed.structuredContent).toMatchObject({
      workflow_id: id,
      outcome: 'failed',
      state_name: 'FAILED',
      error: { message: expect.any(String), failure_type: 'unauthorized', failed_step: 'execute' },
    });
    expect(failed.structuredContent!.hint).toContain(`retry_workflow {"workflow_id": "${id}"}`);
    expect(failed.structuredContent!.hint).toContain(`POST /api/workflows/${id}/retry`);
    expect(text(failed)).toContain('failure_type unauthorized, failed_step execute');

    const retried = await call(client, 'retry_workflow', { workflow_id: id });
    expect(retried.isError).toBeFalsy();
    expect(retried.structuredContent).toEqual({ workflow_id: id, state_name: expect.any(String), is_terminal: false });

    const completed = await call(client, 'watch_workflow', { workflow_id: id });
    expect(completed.structuredContent).toMatchObject({ outcome: 'completed', state_name: 'COMPLETED', state_data: { status_code: 204 } });
    const doublePath = `/api/v2.1/accounts/${input.accountid}/users/${input.userid}/authorization/${input.authorizationid}`;
    expect((await esignCalls(doublePath)).filter((c) => c.method === 'DELETE')).toHaveLength(2);

    const history = await call(client, 'get_workflow_history', { workflow_id: id });
    const attempts = (history.structuredContent!.transitions as Array<{ attempt: number }>).map((t) => t.attempt);
    expect(attempts[0]).toBe(1);
    expect(attempts.at(-1)).toBe(2);
    const run = await call(client, 'get_workflow', { workflow_id: id });
    expect(run.structuredContent).toEqual((await api(`/api/workflows/${id}`)).body);
    expect(run.structuredContent).toMatchObject({ status: 'COMPLETED', attempt: 2 });

    const again = await call(client, 'retry_workflow', { workflow_id: id });
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/^retry_workflow was refused: 409 not_failed: /);
  });

  it('watch_workflow past timeout_seconds: "still running" with the current state', async () => {
    // The double never answers: the run stays in PENDING for the provider call's attempts.
    const started = await call(client, 'start_workflow', { workflow_type: DELETE, initial_data: esignDeleteInput('hang') });
    const id = started.structuredContent!.workflow_id as string;
    const t0 = Date.now();
    const result = await call(client, 'watch_workflow', { workflow_id: id, timeout_seconds: 1 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(result.isError).toBeFalsy();
    const current = await api(`/api/workflows/${id}`);
    expect(current.body.status).toBe('RUNNING');
    expect(result.structuredContent).toMatchObject({ workflow_id: id, outcome: 'running', state_name: current.body.state_name });
    expect(text(result)).toContain('still running');
  });

  it("another organization's run is not found through the tools", async () => {
    const started = await call(client, 'start_workflow', { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl } });
    const id = started.structuredContent!.workflow_id as string;
    const other = await connect(kind, stackEnv.tokenB);
    for (const name of ['get_workflow', 'get_workflow_history', 'watch_workflow', 'retry_workflow']) {
      const result = await call(other, name, { workflow_id: id });
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(`${name} was refused: 404 not_found: run ${id} not found`);
    }
  });

  it('an argument that breaks the input schema is a tool error naming it', async () => {
    const result = await call(client, 'watch_workflow', { workflow_id: 'wf_x', timeout_seconds: 601 });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('timeout_seconds');
  });
});

describe('MCP over HTTP: authentication and methods', () => {
  const mcpUrl = () => `${stackEnv.apiUrl}/mcp`;
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });

  it('a missing token is refused: 401 JSON with WWW-Authenticate, and the SDK client cannot connect', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'missing bearer token', details: null } });
    const client = new Client({ name: 'no-token', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl())))).rejects.toMatchObject({ code: 401 });
  });

  it('a wrong token is refused: 401 JSON, and the SDK client cannot connect', async () => {
    const res = await post({ authorization: 'Bearer wes_not-a-real-token' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'unknown or revoked token', details: null } });
    await expect(connect('http', 'wes_not-a-real-token')).rejects.toMatchObject({ code: 401 });
  });

  it('GET and DELETE /mcp: 405 with Allow: POST (stateless: no standalone stream, no session), after authentication', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(mcpUrl(), { method, headers: { authorization: `Bearer ${stackEnv.tokenA}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
      expect((await fetch(mcpUrl(), { method })).status).toBe(401);
    }
  });

  it('stateless: no Mcp-Session-Id, and every POST stands alone', async () => {
    const res = await post({ authorization: `Bearer ${stackEnv.tokenA}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    await res.text();
    const list = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${stackEnv.tokenA}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('"name":"start_workflow"');
  });

  it('/mcp is outside /api and the OpenAPI document', async () => {
    const document = await api('/api/openapi.json', { token: null });
    expect(Object.keys(document.body.paths).filter((p) => p.includes('mcp'))).toEqual([]);
    expect((await api('/api/mcp', { body: initialize })).status).toBe(404);
  });

  it('the bearer token appears in no log line', async () => {
    const client = await connect('http');
    await call(client, 'list_workflow_types', {});
    const log = fs.readFileSync(stackEnv.logFile, 'utf8');
    expect(log).toContain('"route":"/mcp"');
    expect(log).not.toContain(stackEnv.tokenA);
  });
});

describe('a watch the agent abandons releases its stream', () => {
  // One open stream per token: while a watch holds its stream, a second one is a 429.
  const extra = new ExtraApi({
    TEMPORAL_ADDRESS: stackEnv.temporalAddress,
    ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY!,
    SSE_MAX_STREAMS_PER_TOKEN: '1',
    ALLOW_HTTP_HOSTS: '127.0.0.1',
    OUTBOUND_ALLOW: outboundAllowFor(stackEnv.esignUrl),
  });
  let token: string;
  beforeAll(async () => {
    await extra.start();
    token = JSON.parse(extra.cli(['org', 'create', uniqueId('watcher'), '--json'])).token;
  });
  afterAll(() => extra.stop());

  /** The status a stream of this token gets now; the probe closes it at once. */
  async function probeStream(id: string): Promise<number> {
    const controller = new AbortController();
    const res = await fetch(`${extra.url}/api/workflows/${id}/stream`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    controller.abort();
    return res.status;
  }

  it.each<[TransportName, string]>([
    ['http', 'the client closes its connection'],
    ['stdio', 'the client cancels the call'],
  ])('over %s, when %s', async (kind) => {
    const started = await fetch(`${extra.url}/api/workflows/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow_type: DELETE, initial_data: esignDeleteInput('hang') }),
    });
    expect(started.status).toBe(201);
    const id = ((await started.json()) as { workflow_id: string }).workflow_id;
    const client = await connect(kind, token, extra.url);
    const cancel = new AbortController();
    const watching = client.callTool({ name: 'watch_workflow', arguments: { workflow_id: id, timeout_seconds: 60 } }, undefined, {
      signal: cancel.signal,
    });
    let settled = false;
    watching.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Probing sooner could take the one stream before the watch does.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(settled).toBe(false);
    expect(await probeStream(id)).toBe(429);

    if (kind === 'http') await client.close();
    else cancel.abort();
    await expect(watching).rejects.toThrow();
    await waitFor('the stream to be released', async () => ((await probeStream(id)) === 200 ? true : undefined), 10_000, 100);
  });
});

/**
 * A TCP proxy to `target` that cuts the connection carrying the first transition event it
 * passes, once, right after passing it on; it keeps the head of every request it forwards.
 */
async function cutOnceProxy(target: URL) {
  const heads: string[] = [];
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^(GET|POST) /.test(text)) heads.push(text.split('\r\n\r\n')[0]);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cut || !/^event: ?transition$/m.test(chunk.toString('latin1'))) return void client.write(chunk);
      cut = true;
      client.write(chunk, closeBoth);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  };
  return { url, heads, close };
}

describe('watch_workflow across a dropped stream', () => {
  it('reopens the stream after the last seq it saw: every transition once, in order, then the result', async () => {
    const proxy = await cutOnceProxy(new URL(stackEnv.apiUrl));
    try {
      const connection = await api('/api/connections', {
        body: {
          plugin: 'dbhost',
          name: uniqueId('dbhost-watch'),
          secrets: { api_token: DBHOST_VALID_TOKEN },
          config: { api_url: process.env.TEST_DBHOST_URL },
        },
      });
      // A transition per poll, one a second: the cut comes mid-run, with transitions still to come.
      const initialData = {
        connection_uuid: connection.body.connection_uuid,
        dbhost_project_id: uniqueId('floral'),
        dbhost_operation_id: uniqueId('finishes-3'),
        timeout_seconds: 30,
        poll_interval: 1,
      };
      const client = await connect('stdio', stackEnv.tokenA, proxy.url);
      const started = await call(client, 'start_workflow', { workflow_type: 'dbhost.operations.wait', initial_data: initialData });
      const id = (started.structuredContent as { workflow_id: string }).workflow_id;
      const progress: number[] = [];
      const watched = await call(client, 'watch_workflow', { workflow_id: id, timeout_seconds: 30 }, (p) => progress.push(p.progress));

      expect(watched.structuredContent).toMatchObject({ outcome: 'completed', state_name: 'COMPLETED' });
      const streams = proxy.heads.filter((h) => h.startsWith(`GET /api/workflows/${id}/stream `));
      expect(streams).toHaveLength(2);
      expect(streams[0]).not.toMatch(/last-event-id/i);
      const resumedAfter = Number(/\r\nlast-event-id: (\d+)/i.exec(streams[1])?.[1]);
      const history = await api(`/api/workflows/${id}/history`);
      const seqs = history.body.transitions.map((t: { seq: number }) => t.seq);
      expect(resumedAfter).toBeGreaterThanOrEqual(1);
      expect(resumedAfter).toBeLessThan(seqs.length);
      expect((watched.structuredContent as { transitions: Array<{ seq: number }> }).transitions.map((t) => t.seq)).toEqual(seqs);
      // Notifications can trail the result (typescript-sdk#2580, above): those that came are each seq once, in order.
      expect(progress).toEqual(seqs.slice(0, progress.length));
      expect(progress.length).toBeGreaterThanOrEqual(resumedAfter);
    } finally {
      await proxy.close();
    }
  });
});

describe('MCP over stdio: the bin and its configuration', () => {
  it('without WFE_URL or WFE_TOKEN it exits 2 saying what to set, writing nothing to stdout', () => {
    const run = spawnSync(process.execPath, [BIN], { env: { PATH: process.env.PATH ?? '', WFE_URL: stackEnv.apiUrl }, encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('WFE_TOKEN');
  });

  it('a wrong WFE_TOKEN: each tool call is a tool error saying 401 unauthorized', async () => {
    const client = await connect('stdio', 'wes_not-a-real-token');
    const result = await call(client, 'list_workflow_types', {});
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('list_workflow_types was refused: 401 unauthorized: unknown or revoked token');
  });

  it('an unreachable WFE_URL: a tool error naming the API it could not reach', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const client = new Client({ name: 'unreachable', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN],
        env: { PATH: process.env.PATH ?? '', WFE_URL: closed, WFE_TOKEN: stackEnv.tokenA },
        stderr: 'pipe',
      }),
    );
    open.push(client);
    const result = await call(client, 'get_workflow', { workflow_id: 'wf_x' });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(`get_workflow failed: the API at ${closed}/api could not be reached (ECONNREFUSED)`);
  });

  it('npm run mcp (as the README configures it) serves the same tools', async () => {
    const npm = execFileSync('which', ['npm'], { encoding: 'utf8' }).trim();
    const client = new Client({ name: 'npm-run', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: npm,
        args: ['run', '--silent', '--prefix', ROOT, 'mcp'],
        env: { PATH: process.env.PATH ?? '', WFE_URL: stackEnv.apiUrl, WFE_TOKEN: stackEnv.tokenA },
        stderr: 'pipe',
      }),
    );
    open.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  });
});
