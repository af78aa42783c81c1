import { execFileSync } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createOutboundDispatcher, type Resolve } from '../../activities/outbound-dispatcher';
import { createDataConverter } from '../../activities/payload-codec';
import { callProvider } from '../../activities/provider-http';
import { esignGetResourceInformation, TASK_QUEUE } from '../../workflows';
import { INWARD_SECRET, type InwardService, startInwardService } from '../doubles/inward-service';
import { api, stackEnv, uniqueId, waitForTerminal } from '../support/api';
import { outboundAllowFor, TEST_PROVIDER_HOST } from '../support/outbound';

/**
 * Server-side request forgery: a tenant names an inward address as a provider URL and reads what
 * answers there through the run. Each attack is made twice where the stack allows it: through
 * POST /start (a 422 naming the field, nothing started) and as a run started directly on Temporal,
 * which skips the API's checks (the worker refuses it at connect time). The target is an https
 * service on loopback whose certificate the stack trusts; it counts connections, and must see none.
 */

jest.setTimeout(60_000);

const RESOURCES = 'esign.resources.get-resource-information';
const LIST_ENDPOINTS = 'dbhost.endpoints.list';

let inward: InwardService;
let connection: Connection;
let temporal: Client;
let org: { organization_uuid: string; token: string };

/** The real CLI against the stack's database, as an operator would run it. */
function cli(args: string[]) {
  const env = process.env.TEST_DATABASE_URL
    ? { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL }
    : { ...process.env, DATA_DIR: `${process.env.TEST_WORK_DIR}/data` };
  return JSON.parse(execFileSync(process.execPath, ['dist/src/cli.js', ...args, '--json'], { env, encoding: 'utf8' }));
}

beforeAll(async () => {
  inward = await startInwardService();
  connection = await Connection.connect({ address: stackEnv.temporalAddress });
  temporal = new Client({ connection, dataConverter: createDataConverter(Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex')) });
  // An organization of this suite's own: its run count moves only with what these attacks start.
  org = cli(['org', 'create', uniqueId('ssrf')]);
});

afterAll(async () => {
  await connection?.close();
  await inward?.close();
});

const runCount = async () => {
  const res = await api(`/api/workflows?limit=100`, { token: org.token });
  expect(res.status).toBe(200);
  return res.body.runs.length as number;
};

/** POST /start refuses the URL: 422, the field and the rule named, no run started, nothing connected. */
async function refusedAtStart(baseUrl: string, range: string) {
  const before = { runs: await runCount(), connections: inward.connections };
  const res = await api('/api/workflows/start', { token: org.token, body: { workflow_type: RESOURCES, initial_data: { base_url: baseUrl } } });
  expect(res.status).toBe(422);
  expect(res.body.error.details).toEqual([
    { field: 'initial_data.base_url', rule: 'outbound_policy', message: expect.stringContaining(`is a non-public address (${range}) not in OUTBOUND_ALLOW`) },
  ]);
  expect(await runCount()).toBe(before.runs);
  expect(inward.connections).toBe(before.connections);
}

/** The run ends FAILED as outbound_policy after one attempt, holding nothing of the inward service. */
async function failedByPolicy(workflowId: string, message: string | RegExp) {
  const run = await waitForTerminal(workflowId, org.token);
  expect(run.status).toBe('FAILED');
  expect(run.state_data).toMatchObject({ failure_type: 'outbound_policy' });
  expect(run.state_data.failure_reason).toMatch(message);
  const history = await api(`/api/workflows/${workflowId}/history`, { token: org.token });
  expect(JSON.stringify([run, history.body])).not.toContain(INWARD_SECRET.internal);
  return run;
}

/** The worker refuses the URL in a run started on Temporal directly, past the API's checks. */
async function refusedAtConnect(baseUrl: string, message: string | RegExp) {
  const before = inward.connections;
  const workflowId = `wf_ssrf_${uniqueId('direct').replace(/-/g, '_')}`;
  await temporal.workflow.start(esignGetResourceInformation, {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{ organization_uuid: org.organization_uuid, initial_data: { base_url: baseUrl } }],
  });
  const run = await failedByPolicy(workflowId, message);
  expect(inward.connections).toBe(before);
  return run;
}

async function refused(baseUrl: string, host: string, range: string) {
  await refusedAtStart(baseUrl, range);
  await refusedAtConnect(baseUrl, `e-signature API not called: ${host} is a non-public address (${range}) not in OUTBOUND_ALLOW`);
}

describe('outbound calls refuse inward addresses', () => {
  it('https://127.0.0.1:<port>/api, a trusted https service on loopback', async () => {
    await refused(`https://127.0.0.1:${inward.port}/api`, '127.0.0.1', 'loopback');
  });

  it('https://169.254.169.254/api, the cloud metadata address', async () => {
    await refused('https://169.254.169.254/api', '169.254.169.254', 'link-local');
  });

  it('https://10.0.0.1/api, private', async () => {
    await refused('https://10.0.0.1/api', '10.0.0.1', 'private');
  });

  it('https://192.168.0.1/api, private', async () => {
    await refused('https://192.168.0.1/api', '192.168.0.1', 'private');
  });

  it('https://[::1]:<port>/api, IPv6 loopback', async () => {
    await refused(`https://[::1]:${inward.port}/api`, '::1', 'loopback');
  });

  it('http://2130706433:<port>/api, decimal IPv4 (plain http passes ALLOW_HTTP_HOSTS, the address does not)', async () => {
    await refused(`http://2130706433:${inward.port}/api`, '127.0.0.1', 'loopback');
  });

  it('https://0x7f.1:<port>/api, hexadecimal shorthand IPv4', async () => {
    await refused(`https://0x7f.1:${inward.port}/api`, '127.0.0.1', 'loopback');
  });

  it('https://017700000001:<port>/api, octal IPv4', async () => {
    await refused(`https://017700000001:${inward.port}/api`, '127.0.0.1', 'loopback');
  });

  it('https://[::ffff:127.0.0.1]:<port>/api, IPv4-mapped IPv6', async () => {
    await refused(`https://[::ffff:127.0.0.1]:${inward.port}/api`, '::ffff:7f00:1', 'loopback');
  });

  it('https://[::ffff:7f00:1]:<port>/api, IPv4-mapped IPv6 in hex', async () => {
    await refused(`https://[::ffff:7f00:1]:${inward.port}/api`, '::ffff:7f00:1', 'loopback');
  });

  it('https://[64:ff9b::a9fe:a9fe]/api, the metadata address through NAT64', async () => {
    await refused('https://[64:ff9b::a9fe:a9fe]/api', '64:ff9b::a9fe:a9fe', 'link-local, IPv4 in IPv6');
  });

  it('https://0.0.0.0:<port>/api, unspecified (Linux connects it to loopback)', async () => {
    await refused(`https://0.0.0.0:${inward.port}/api`, '0.0.0.0', 'unspecified');
  });

  it('https://[::]:<port>/api, IPv6 unspecified', async () => {
    await refused(`https://[::]:${inward.port}/api`, '::', 'unspecified');
  });

  it('https://100.64.0.1/api, carrier-grade NAT', async () => {
    await refused('https://100.64.0.1/api', '100.64.0.1', 'carrier-grade NAT');
  });

  it('https://224.0.0.1/api, multicast', async () => {
    await refused('https://224.0.0.1/api', '224.0.0.1', 'multicast');
  });

  it('https://255.255.255.255/api, broadcast', async () => {
    await refused('https://255.255.255.255/api', '255.255.255.255', 'broadcast');
  });

  it('https://192.0.2.1/api, documentation', async () => {
    await refused('https://192.0.2.1/api', '192.0.2.1', 'reserved or documentation');
  });

  it('https://[fc00::1]/api, IPv6 unique-local', async () => {
    await refused('https://[fc00::1]/api', 'fc00::1', 'unique-local');
  });

  it('https://[fe80::1]/api, IPv6 link-local', async () => {
    await refused('https://[fe80::1]/api', 'fe80::1', 'link-local');
  });

  it('https://localhost:<port>/api: a name is not resolved at start, and the worker refuses what it resolves to', async () => {
    const before = inward.connections;
    const res = await api('/api/workflows/start', {
      token: org.token,
      body: { workflow_type: RESOURCES, initial_data: { base_url: `https://localhost:${inward.port}/api` } },
    });
    expect(res.status).toBe(201);
    await failedByPolicy(res.body.workflow_id, /^e-signature API not called: localhost resolves to a non-public address \(loopback\) not in OUTBOUND_ALLOW$/);
    expect(inward.connections).toBe(before);
  });

  it('a dbhost connection whose api_url is an inward literal: 422 outbound_policy at creation, nothing stored', async () => {
    const name = uniqueId('inward');
    const created = await api('/api/connections', {
      token: org.token,
      body: { plugin: 'dbhost', name, secrets: { api_token: 'inward-token' }, config: { api_url: `https://127.0.0.1:${inward.port}` } },
    });
    expect(created.status).toBe(422);
    expect(created.body.error.details).toEqual([expect.objectContaining({ field: 'config.api_url', rule: 'outbound_policy' })]);
    const listed = await api('/api/connections?plugin=dbhost', { token: org.token });
    expect(listed.body.connections.map((c: { name: string }) => c.name)).not.toContain(name);
  });

  it('a dbhost connection whose api_url names a host resolving inward: the other provider goes through the same check', async () => {
    const created = await api('/api/connections', {
      token: org.token,
      body: { plugin: 'dbhost', name: uniqueId('inward'), secrets: { api_token: 'inward-token' }, config: { api_url: `https://localhost:${inward.port}` } },
    });
    expect(created.status).toBe(201);
    const before = inward.connections;
    const res = await api('/api/workflows/start', {
      token: org.token,
      body: { workflow_type: LIST_ENDPOINTS, initial_data: { connection_uuid: created.body.connection_uuid, dbhost_project_id: 'p' } },
    });
    expect(res.status).toBe(201);
    await failedByPolicy(res.body.workflow_id, /^database-host API not called: localhost resolves to a non-public address \(loopback\) not in OUTBOUND_ALLOW$/);
    expect(inward.connections).toBe(before);
  });

  it('no port scanning: an open and a closed inward port fail alike, at once', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const started = Date.now();
    const open = await refusedAtConnect(`https://127.0.0.1:${inward.port}/api`, /not in OUTBOUND_ALLOW$/);
    const shut = await refusedAtConnect(`https://127.0.0.1:${closed}/api`, /not in OUTBOUND_ALLOW$/);
    const comparable = (run: any) => ({ status: run.status, type: run.state_data.failure_type, reason: run.state_data.failure_reason, step: run.state_data.failed_step });
    expect(comparable(shut)).toEqual(comparable(open));
    // Refused before connecting, so never a provider time-out (PROVIDER_TIMEOUT_MS on the stack is 1.5 s, retried).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a redirect from an allowed provider to an inward address is not followed', async () => {
    const redirector = http.createServer((_req, res) => res.writeHead(302, { location: `https://127.0.0.1:${inward.port}/api/v2.1` }).end());
    await new Promise<void>((r) => redirector.listen(0, TEST_PROVIDER_HOST, r));
    try {
      const baseUrl = `http://${TEST_PROVIDER_HOST}:${(redirector.address() as AddressInfo).port}/api`;
      const before = inward.connections;
      const res = await api('/api/workflows/start', { token: org.token, body: { workflow_type: RESOURCES, initial_data: { base_url: baseUrl } } });
      expect(res.status).toBe(201);
      const run = await waitForTerminal(res.body.workflow_id, org.token);
      // Not outbound_policy: the redirect was never followed, so no connection to its target was even attempted.
      expect(run).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'redirect_refused', status_code: 302 } });
      expect(JSON.stringify(run)).not.toContain(INWARD_SECRET.internal);
      expect(inward.connections).toBe(before);
    } finally {
      redirector.closeAllConnections();
      await new Promise((r) => redirector.close(r));
    }
  });
});

/**
 * Name resolution cases, on the worker's transport in this process: the stack's worker asks the
 * machine's resolver, which a test cannot make answer what an attacker's DNS server would.
 */
describe('outbound calls refuse names that resolve inward', () => {
  const allow = parseOutboundAllow(outboundAllowFor(stackEnv.esignUrl));

  function stubResolve(answers: string[][]): Resolve & { calls: string[] } {
    const calls: string[] = [];
    const resolve = async (hostname: string) => {
      calls.push(hostname);
      return answers[Math.min(calls.length, answers.length) - 1].map((address) => ({ address }));
    };
    return Object.assign(resolve, { calls });
  }

  const get = (dispatcher: ReturnType<typeof createOutboundDispatcher>, url: string, allowHttpHosts: string[] = []) =>
    callProvider({ allowHttpHosts, timeoutMs: 2_000, dispatcher }, { method: 'GET', url, provider: 'e-signature API' }).then(
      (answer) => ({ answer, failure: undefined }),
      (failure: { type?: string; message: string; nonRetryable?: boolean }) => ({ answer: undefined, failure }),
    );

  it('a name an attacker DNS server answers with 127.0.0.1 is refused, nothing connected', async () => {
    const resolve = stubResolve([['127.0.0.1']]);
    const dispatcher = createOutboundDispatcher({ allow, resolve });
    const before = inward.connections;
    const { answer, failure } = await get(dispatcher, `https://inward.attacker.example:${inward.port}/api/v2.1`);
    await dispatcher.close();
    expect(answer).toBeUndefined();
    expect(failure).toMatchObject({
      type: 'outbound_policy',
      nonRetryable: true,
      message: 'e-signature API not called: inward.attacker.example resolves to a non-public address (loopback) not in OUTBOUND_ALLOW',
    });
    expect(resolve.calls).toEqual(['inward.attacker.example']);
    expect(inward.connections).toBe(before);
  });

  it('DNS rebinding: the first answer public, the second inward; each connection checks its own answer', async () => {
    const resolve = stubResolve([['93.184.215.14'], ['127.0.0.1']]);
    const dispatcher = createOutboundDispatcher({ allow, resolve });
    // The public address is not dialled for real: the socket to it fails at once, after the check let it through.
    const realConnect = net.connect.bind(net);
    const dialled: string[] = [];
    const spy = jest.spyOn(net, 'connect').mockImplementation(((options: net.NetConnectOpts) => {
      const host = (options as net.TcpNetConnectOpts).host ?? '';
      dialled.push(host);
      if (host !== '93.184.215.14') return realConnect(options);
      const socket = new net.Socket();
      process.nextTick(() => socket.destroy(Object.assign(new Error(`connect ECONNREFUSED ${host}`), { code: 'ECONNREFUSED' })));
      return socket;
    }) as typeof net.connect);
    const before = inward.connections;
    try {
      const url = `http://rebind.attacker.example:${inward.port}/api/v2.1`;
      const first = await get(dispatcher, url, ['rebind.attacker.example']);
      expect(first.failure).toMatchObject({ type: 'unreachable' });
      const second = await get(dispatcher, url, ['rebind.attacker.example']);
      expect(second.failure).toMatchObject({
        type: 'outbound_policy',
        message: 'e-signature API not called: rebind.attacker.example resolves to a non-public address (loopback) not in OUTBOUND_ALLOW',
      });
    } finally {
      spy.mockRestore();
      await dispatcher.close();
    }
    expect(resolve.calls).toEqual(['rebind.attacker.example', 'rebind.attacker.example']);
    expect(dialled).toEqual(['93.184.215.14']);
    expect(inward.connections).toBe(before);
  });

  it('an answer mixing a public and an inward address is refused whole', async () => {
    const resolve = stubResolve([['93.184.215.14', '127.0.0.1']]);
    const dispatcher = createOutboundDispatcher({ allow, resolve });
    const before = inward.connections;
    const { failure } = await get(dispatcher, `https://mixed.attacker.example:${inward.port}/api/v2.1`);
    await dispatcher.close();
    expect(failure).toMatchObject({ type: 'outbound_policy', message: expect.stringContaining('mixed.attacker.example resolves to a non-public address (loopback)') });
    expect(inward.connections).toBe(before);
  });
});
