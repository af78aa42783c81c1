import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ConnectionStore } from '../../activities/connections';
import { createHookActivities } from '../../activities/hooks/activities';
import { type HookEndpointRow, HookStore } from '../../activities/hooks/store';
import { DEFAULT_TEST_EVENT } from '../../workflows/hook/contract';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { loadConfig } from '../../src/config';
import { workerActivities } from '../../src/worker/worker';
import { startIngressStandIn } from '../support/ingress-stand-in';
import { dispatcherFor, outboundAllowFor } from '../support/outbound';
import { openMigratedPglite } from '../support/pglite';

/** A tenant's host name that resolves to the API's own address: the target_url check sees only the name. */
const API_ALIAS = 'api-alias.example.test';

jest.mock('node:dns/promises', () => {
  const actual = jest.requireActual('node:dns/promises');
  return {
    ...actual,
    lookup: (host: string, options: object) => (host === API_ALIAS ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : actual.lookup(host, options)),
  };
});

const ORG = 'org_hook_activities';

interface Server {
  url: string;
  /** `METHOD path` of every request received. */
  requests: string[];
  close(): Promise<void>;
}

/** A loopback server that never answers, so a call to it waits until it is cancelled. */
async function neverAnswering(): Promise<Server> {
  const requests: string[] = [];
  const server = http.createServer((req) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function until(what: string, check: () => boolean) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let database: DatabaseHandle;
let hooks: HookStore;
let connections: ConnectionStore;

beforeAll(async () => {
  database = await openMigratedPglite();
  hooks = new HookStore(database.db, SecretBox.derive(randomBytes(32), 'hook-secrets'));
  connections = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
});
afterAll(() => database.close());

const endpoint = async (targetUrl: string): Promise<HookEndpointRow> =>
  (await hooks.createEndpoint(ORG, { name: `e-${randomBytes(4).toString('hex')}`, targetUrl, secret: 'whsec_test', secretSource: 'generated' }))!;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if ('value' in outcome) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  return outcome.err;
}

describe("the worker's activities and the API's own origin (PUBLIC_API_URL on loopback)", () => {
  let api: Awaited<ReturnType<typeof startIngressStandIn>>;
  let activities: ReturnType<typeof workerActivities>;

  beforeAll(async () => {
    api = await startIngressStandIn(hooks);
    const config = loadConfig({ PUBLIC_API_URL: api.url, ALLOW_HTTP_HOSTS: `127.0.0.1,${API_ALIAS}`, PROVIDER_TIMEOUT_MS: '2000' });
    activities = workerActivities(config, database, connections, hooks);
  });
  afterAll(() => api.close());

  it('hook.receive-webhook posts to the ingress there', async () => {
    const row = await endpoint('https://hooks.example.com/x');
    const received = await activities.hookReceiveWebhook({ organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: { probe: true } });
    expect(received).toMatchObject({ ingress_status: 202 });
    expect(api.requests).toContain(`POST /api/hooks/r/${row.endpointUuid}`);
  });

  it('hook.receive-webhook marks its post as a test event, so the ingress leaves its delivery to the run', async () => {
    const row = await endpoint('https://hooks.example.com/x');
    const received = await activities.hookReceiveWebhook({ organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: { probe: 'marked' } });
    expect(api.testEvents).toContain(received.event_uuid);
  });

  it('hook.receive-webhook posts nothing but the default test event to an endpoint whose secret comes from secret_ref', async () => {
    const row = (await hooks.createEndpoint(ORG, { name: `ref-${randomBytes(4).toString('hex')}`, targetUrl: 'https://hooks.example.com/x', secret: 'whsec_payments', secretSource: 'secret_ref', secretRef: 'x/webhook_secret' }))!;
    const path = `POST /api/hooks/r/${row.endpointUuid}`;
    const failure = await rejection(activities.hookReceiveWebhook({ organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: { type: 'checkout.session.completed' } }));
    expect(failure).toMatchObject({ type: 'test_event_not_allowed', nonRetryable: true });
    expect(api.requests).not.toContain(path);
    const received = await activities.hookReceiveWebhook({ organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: DEFAULT_TEST_EVENT });
    expect(api.testEvents).toContain(received.event_uuid);
  });

  it('hook.replay-event does not deliver an expired event; hook.acknowledge-event refuses a pending or an expired one', async () => {
    const row = await endpoint('https://hooks.example.com/x');
    const pending = await hooks.insertEvent(row, '{}', { 'content-type': 'application/json' });
    expect(await rejection(activities.hookAcknowledgeEvent({ organization_uuid: ORG, event_uuid: pending.eventUuid }))).toMatchObject({
      type: 'event_not_delivered',
      nonRetryable: true,
    });
    await hooks.expirePending(ORG, row.endpointUuid, new Date(Date.now() + 1_000));
    expect(await rejection(activities.hookDeliverEvent({ organization_uuid: ORG, event_uuid: pending.eventUuid }))).toMatchObject({
      type: 'event_expired',
      nonRetryable: true,
    });
    expect(await rejection(activities.hookAcknowledgeEvent({ organization_uuid: ORG, event_uuid: pending.eventUuid }))).toMatchObject({ type: 'event_expired' });
    expect(await hooks.event(ORG, pending.eventUuid)).toMatchObject({ state: 'expired', attempts: [] });
  });

  it('hook.receive-webhook retried after the ingress stored its event answers with that event, posting nothing more', async () => {
    const row = await endpoint('https://hooks.example.com/x');
    const req = { organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: { probe: 1 }, request_id: `wf_receive_${row.endpointUuid}#1` };
    const posts = () => api.requests.filter((r) => r === `POST /api/hooks/r/${row.endpointUuid}`).length;
    const first = await activities.hookReceiveWebhook(req);
    const retried = await activities.hookReceiveWebhook(req);
    expect(retried).toEqual(first);
    expect(posts()).toBe(1);
    const nextAttempt = await activities.hookReceiveWebhook({ ...req, request_id: `wf_receive_${row.endpointUuid}#2` });
    expect(nextAttempt.event_uuid).not.toBe(first.event_uuid);
    expect(posts()).toBe(2);
  });

  it('a provider call there is refused by the outbound policy, nothing sent', async () => {
    const failure = await rejection(
      activities.esignRequest({ organization_uuid: ORG, base_url: api.url, method: 'GET', path: '/api/hooks/endpoints', token_required: false }),
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'outbound_policy', nonRetryable: true });
    expect(api.requests).not.toContain('GET /api/hooks/endpoints');
  });

  it('a delivery to a name resolving there is refused by the outbound policy, nothing sent', async () => {
    const port = new URL(api.url).port;
    const ingress = await endpoint('https://hooks.example.com/x');
    const path = `/api/hooks/r/${ingress.endpointUuid}`;
    const event = await hooks.insertEvent(await endpoint(`http://${API_ALIAS}:${port}${path}`), '{"loop":true}', { 'content-type': 'application/json' });
    const failure = await rejection(activities.hookDeliverEvent({ organization_uuid: ORG, event_uuid: event.eventUuid }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'outbound_policy', nonRetryable: true });
    expect(api.requests).not.toContain(`POST ${path}`);
  });
});

describe('a hook activity cancelled while its call waits', () => {
  let target: Server;
  let ingress: Server;
  let activities: ReturnType<typeof createHookActivities>;

  beforeAll(async () => {
    [target, ingress] = await Promise.all([neverAnswering(), neverAnswering()]);
    activities = createHookActivities({
      allowHttpHosts: ['127.0.0.1'],
      timeoutMs: 30_000,
      dispatcher: dispatcherFor([target.url]),
      ingressDispatcher: dispatcherFor([ingress.url]),
      outboundAllow: parseOutboundAllow(outboundAllowFor(target.url)),
      publicApiUrl: ingress.url,
      store: hooks,
      connections,
    });
  });
  afterAll(() => Promise.all([target.close(), ingress.close()]));

  /** Runs the activity, cancels it once `server` has its request, and returns what it threw. */
  async function cancelled(server: Server, run: (env: MockActivityEnvironment) => Promise<unknown>) {
    const before = server.requests.length;
    const env = new MockActivityEnvironment();
    const outcome = rejection(run(env));
    await until('the request', () => server.requests.length > before);
    env.cancel();
    return outcome;
  }

  it('a delivery throws the cancellation and records no attempt on the event', async () => {
    const event = await hooks.insertEvent(await endpoint(`${target.url}/hook`), '{}', { 'content-type': 'application/json' });
    const thrown = await cancelled(target, (env) => env.run(activities.hookDeliverEvent, { organization_uuid: ORG, event_uuid: event.eventUuid }));
    expect(thrown).toBeInstanceOf(CancelledFailure);
    expect((await hooks.event(ORG, event.eventUuid))!.attempts).toEqual([]);
  });

  it('hook.receive-webhook throws the cancellation, not waiting for its time-out', async () => {
    const row = await endpoint('https://hooks.example.com/x');
    const thrown = await cancelled(ingress, (env) =>
      env.run(activities.hookReceiveWebhook, { organization_uuid: ORG, endpoint_uuid: row.endpointUuid, test_event: {} }),
    );
    expect(thrown).toBeInstanceOf(CancelledFailure);
  });
});
