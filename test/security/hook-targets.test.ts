import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { deliverSigned } from '../../activities/hooks/delivery';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createOutboundDispatcher, type Resolve } from '../../activities/outbound-dispatcher';
import { createDataConverter } from '../../activities/payload-codec';
import { hookCreateRedirect, TASK_QUEUE } from '../../workflows';
import { type HookTarget, startHookTarget } from '../doubles/hook-target';
import { api, stackEnv, uniqueId, waitForTerminal } from '../support/api';

/**
 * Server-side request forgery through webhook redirects: a tenant names an inward address as an
 * endpoint's target_url and has the worker POST there. Every spelling of an inward address is
 * refused when the endpoint is created (422 naming target_url, nothing stored); a run started on
 * Temporal directly, past the API, is refused by the worker; and a host name is judged on the
 * address the delivery actually connects to (a stub resolver stands for DNS).
 */

jest.setTimeout(60_000);

let target: HookTarget;
let connection: Connection;
let temporal: Client;
let org: { organization_uuid: string; token: string };

function cli(args: string[]) {
  const env = process.env.TEST_DATABASE_URL
    ? { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL }
    : { ...process.env, DATA_DIR: `${process.env.TEST_WORK_DIR}/data` };
  return JSON.parse(execFileSync(process.execPath, ['dist/src/cli.js', ...args, '--json'], { env, encoding: 'utf8' }));
}

beforeAll(async () => {
  target = await startHookTarget();
  connection = await Connection.connect({ address: stackEnv.temporalAddress });
  temporal = new Client({ connection, dataConverter: createDataConverter(Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex')) });
  org = cli(['org', 'create', uniqueId('hook-ssrf')]);
});

afterAll(async () => {
  await connection?.close();
  await target?.close();
});

const endpointCount = async () => (await api('/api/hooks/endpoints', { token: org.token })).body.endpoints.length as number;

describe('target_url refused when the endpoint is created', () => {
  const refused: Array<[string, string, RegExp]> = [
    ['plain http', 'http://example.com/hook', /must use https/],
    ['another scheme', 'ftp://example.com/hook', /must use https/],
    ['credentials in the URL', 'https://user:pw@example.com/hook', /credentials/],
    ['loopback', 'https://127.0.0.1/hook', /loopback/],
    ['loopback, another address of 127/8', 'https://127.8.9.10/hook', /loopback/],
    ['private 10/8', 'https://10.1.2.3/hook', /private/],
    ['private 172.16/12', 'https://172.16.0.1/hook', /private/],
    ['private 192.168/16', 'https://192.168.1.1/hook', /private/],
    ['link-local, the cloud metadata address', 'https://169.254.169.254/latest/meta-data/', /link-local/],
    ['carrier-grade NAT', 'https://100.64.0.1/hook', /carrier-grade NAT/],
    ['unspecified', 'https://0.0.0.0/hook', /unspecified/],
    ['IPv6 loopback', 'https://[::1]/hook', /loopback/],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['IPv4-mapped IPv6 metadata', 'https://[::ffff:a9fe:a9fe]/hook', /link-local/],
    ['IPv6 link-local', 'https://[fe80::1]/hook', /link-local/],
    ['IPv6 unique-local', 'https://[fd00::1]/hook', /unique-local/],
    ['decimal spelling of 127.0.0.1', 'https://2130706433/hook', /loopback/],
    ['octal spelling of 127.0.0.1', 'https://0177.0.0.1/hook', /loopback/],
    ['hexadecimal spelling of 169.254.169.254', 'https://0xa9fea9fe/hook', /link-local/],
    ['short form of 10.0.0.1', 'https://10.1/hook', /private/],
    ['this service itself', `${stackEnv.apiUrl}/api/hooks/r/00000000-0000-4000-8000-000000000000`, /must not point at this service/],
  ];

  it.each(refused)('%s: 422 naming target_url, nothing stored', async (_name, url, reason) => {
    const before = await endpointCount();
    const res = await api('/api/hooks/endpoints', { token: org.token, body: { name: uniqueId('ssrf'), target_url: url } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'target_url', rule: 'outbound_policy', message: expect.stringMatching(reason) }]);
    expect(await endpointCount()).toBe(before);
  });

  it('refuses the same through POST /api/workflows/start for hook.create-redirect', async () => {
    const res = await api('/api/workflows/start', {
      token: org.token,
      body: { workflow_type: 'hook.create-redirect', initial_data: { target_url: 'https://[::ffff:169.254.169.254]/x' } },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(/target_url/);
    expect(await endpointCount()).toBe(0);
  });

  // hook.receive-webhook's dispatcher alone may reach the API's own host:port (deliveries' refuses
  // it: test/unit/hook-activities.test.ts): that opens neither the API's origin as a target nor
  // any other port of loopback.
  it.each([
    ['the metadata address, in decimal', 'https://2852039166/latest/meta-data/', /link-local/],
    ['this service itself', `${stackEnv.apiUrl}/api/hooks/endpoints`, /must not point at this service/],
    ['another port of the API host', `${stackEnv.apiUrl.replace(/:\d+$/, '')}:1/x`, /loopback/],
  ])('refuses %s in the worker, for a run started on Temporal directly, past the API', async (_name, url, reason) => {
    const workflowId = `wf_${uniqueId('direct')}`.replace(/-/g, '');
    await temporal.workflow.start(hookCreateRedirect, {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [{ organization_uuid: org.organization_uuid, initial_data: { target_url: url } }],
    });
    const run = await waitForTerminal(workflowId, org.token);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({ failure_type: 'target_url_refused' });
    expect(run.state_data.failure_reason).toMatch(reason);
    expect(await endpointCount()).toBe(0);
  });
});

describe('host names judged on the address connected to', () => {
  const port = () => new URL(target.url).port;
  const deliver = async (host: string, answers: Record<string, string[]>, allow = '') => {
    const path = `/${uniqueId('dns')}`;
    const lookups: string[] = [];
    const resolve: Resolve = async (hostname) => {
      lookups.push(hostname);
      return (answers[hostname] ?? []).map((address) => ({ address }));
    };
    const dispatcher = createOutboundDispatcher({ allow: parseOutboundAllow(allow), resolve });
    const outcome = await deliverSigned(
      { dispatcher, timeoutMs: 2_000 },
      { url: `http://${host}:${port()}${path}`, body: '{"probe":true}', contentType: 'application/json', secret: 'whsec_test', eventUuid: 'e' },
    );
    return { outcome, lookups, received: target.to(path) };
  };

  it.each([
    ['a name resolving to loopback', ['127.0.0.2'], /loopback/],
    ['a name resolving to the metadata address', ['169.254.169.254'], /link-local/],
    ['a name resolving to an IPv4-mapped IPv6 loopback', ['::ffff:127.0.0.2'], /loopback/],
    ['a name resolving to a private address', ['10.0.0.7'], /private/],
    ['a name answering a public and an inward address', ['93.184.216.34', '127.0.0.2'], /loopback/],
  ])('%s: refused before any connection is opened', async (_name, addresses, reason) => {
    const { outcome, lookups, received } = await deliver('hooks.example.test', { 'hooks.example.test': addresses });
    expect(outcome).toMatchObject({ status_code: null, refused: true, error: expect.stringMatching(reason) });
    expect(outcome.error).not.toContain('127.0.0.2');
    expect(lookups).toEqual(['hooks.example.test']);
    expect(received).toHaveLength(0);
  });

  it('connects to the address it checked: an allowlisted name reaches the target, signed', async () => {
    const { outcome, received } = await deliver('hooks.internal', { 'hooks.internal': ['127.0.0.2'] }, 'hooks.internal');
    expect(outcome).toMatchObject({ status_code: 200 });
    expect(received).toHaveLength(1);
    expect(received[0].headers['webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });
});
