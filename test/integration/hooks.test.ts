import fs from 'node:fs';
import { type HookTarget, startHookTarget, verifyWebhookSignature } from '../doubles/hook-target';
import { api, control, secretLeaks, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { sign } from '../support/payments-events';
import { waitFor } from '../support/ports';

/**
 * Webhook redirects through the real API and worker: endpoints and events (org-scoped), the public
 * ingress, signed deliveries to a loopback target that verifies them, retries, replay, acknowledge,
 * expiry, rotate-secret, and each hook.* workflow type started alone.
 */

jest.setTimeout(60_000);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let target: HookTarget;
/** Every secret this file saw: none may show anywhere but the response that returned it. */
const secrets: Record<string, string> = {};
const startedRuns: string[] = [];

beforeAll(async () => {
  target = await startHookTarget();
});

afterAll(async () => {
  await target?.close();
});

/** Creates an endpoint whose target path is its own, trusted with its secret by the target. */
async function createEndpoint(behaviour: Array<number | 'hang'> = [200], extra: Record<string, unknown> = {}, token = stackEnv.tokenA) {
  const path = `/${uniqueId('hook')}`;
  target.answer(path, ...behaviour);
  const res = await api('/api/hooks/endpoints', { token, body: { name: uniqueId('endpoint'), target_url: target.url + path, ...extra } });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
  if (res.body.signing_secret) {
    secrets[`secret of ${res.body.endpoint_uuid}`] = res.body.signing_secret;
    target.trust(path, res.body.signing_secret);
  }
  return { endpoint: res.body, path };
}

async function post(ingressUrl: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(ingressUrl, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as any };
}

async function eventOf(eventUuid: string, token = stackEnv.tokenA) {
  return (await api(`/api/hooks/events/${eventUuid}`, { token })).body;
}

const waitForEvent = (eventUuid: string, accept: (event: any) => boolean, label: string) =>
  waitFor(`event ${eventUuid} ${label}`, async () => {
    const event = await eventOf(eventUuid);
    return accept(event) ? event : undefined;
  });

async function run(type: string, initialData: Record<string, unknown>) {
  const id = await startRun(type, initialData);
  startedRuns.push(id);
  return waitForTerminal(id);
}

describe('endpoints', () => {
  it('creates an endpoint: 201 with the view and the signing secret, returned only there', async () => {
    const { endpoint, path } = await createEndpoint();
    expect(endpoint).toEqual({
      endpoint_uuid: expect.stringMatching(UUID),
      name: expect.any(String),
      target_url: target.url + path,
      ingress_url: `${stackEnv.apiUrl}/api/hooks/r/${endpoint.endpoint_uuid}`,
      secret_source: 'generated',
      secret_ref: null,
      state: 'active',
      created_at: expect.stringMatching(ISO),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const { signing_secret: _secret, ...view } = endpoint;
    expect((await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}`)).body).toEqual(view);
    const list = await api('/api/hooks/endpoints');
    expect(list.status).toBe(200);
    expect(list.body.endpoints).toContainEqual(view);
    expect(JSON.stringify(list.body)).not.toContain(endpoint.signing_secret);
  });

  it('refuses a second endpoint of the same name with 409, and bad fields with 422 naming them', async () => {
    const { endpoint } = await createEndpoint();
    const again = await api('/api/hooks/endpoints', { body: { name: endpoint.name, target_url: endpoint.target_url } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('endpoint_name_taken');
    const plain = await api('/api/hooks/endpoints', { body: { name: uniqueId('n'), target_url: 'http://example.com/hook' } });
    expect(plain.status).toBe(422);
    expect(plain.body.error.details).toEqual([expect.objectContaining({ field: 'target_url', rule: 'outbound_policy' })]);
    const self = await api('/api/hooks/endpoints', { body: { name: uniqueId('n'), target_url: `${stackEnv.apiUrl}/api/hooks/r/x` } });
    expect(self.status).toBe(422);
    expect(self.body.error.message).toContain('target_url: must not point at this service');
    const missing = await api('/api/hooks/endpoints', { body: { target_url: target.url } });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'name' })]);
    const badRef = await api('/api/hooks/endpoints', { body: { name: uniqueId('n'), target_url: target.url, secret_ref: 'not-a-ref' } });
    expect(badRef.status).toBe(422);
    expect(badRef.body.error.details).toEqual([expect.objectContaining({ field: 'secret_ref' })]);
    const unknownRef = await api('/api/hooks/endpoints', {
      body: { name: uniqueId('n'), target_url: target.url, secret_ref: '00000000-0000-4000-8000-000000000000/webhook_secret' },
    });
    expect(unknownRef.status).toBe(422);
    expect(unknownRef.body.error.details).toEqual([expect.objectContaining({ field: 'secret_ref', rule: 'not_found' })]);
  });

  it('answers 404 for another organization\'s endpoint and events, on every route', async () => {
    const { endpoint } = await createEndpoint();
    const ingress = await post(endpoint.ingress_url, '{"n":1}');
    const id = endpoint.endpoint_uuid;
    const other = { token: stackEnv.tokenB };
    for (const [path, method] of [
      [`/api/hooks/endpoints/${id}`, 'GET'],
      [`/api/hooks/endpoints/${id}`, 'DELETE'],
      [`/api/hooks/endpoints/${id}/events`, 'GET'],
      [`/api/hooks/endpoints/${id}/rotate-secret`, 'POST'],
      [`/api/hooks/events/${ingress.body.event_uuid}`, 'GET'],
      [`/api/hooks/events/${ingress.body.event_uuid}/replay`, 'POST'],
      [`/api/hooks/events/${ingress.body.event_uuid}/acknowledge`, 'POST'],
    ]) {
      const res = await api(path, { ...other, method });
      expect([path, method, res.status]).toEqual([path, method, 404]);
    }
    expect((await api('/api/hooks/endpoints', other)).body.endpoints.map((e: any) => e.endpoint_uuid)).not.toContain(id);
    expect((await api(`/api/hooks/endpoints/${id}`)).status).toBe(200);
    expect((await api('/api/hooks/endpoints', { token: null })).status).toBe(401);
  });

  it('deletes an endpoint with its events: 204, then 404 on the API and at the ingress', async () => {
    const { endpoint } = await createEndpoint();
    const ingress = await post(endpoint.ingress_url, '{"n":1}');
    expect((await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}`)).status).toBe(404);
    expect((await api(`/api/hooks/events/${ingress.body.event_uuid}`)).status).toBe(404);
    expect((await post(endpoint.ingress_url, '{}')).status).toBe(404);
  });
});

describe('ingress and delivery', () => {
  it('stores a posted event without a token (202 {event_uuid}) and delivers it signed to target_url', async () => {
    const { endpoint, path } = await createEndpoint();
    const body = JSON.stringify({ type: 'order.paid', data: { id: uniqueId('order') } });
    const res = await post(endpoint.ingress_url, body, { 'content-type': 'application/json', 'x-request-id': 'req-1', cookie: 'session=s3cr3t' });
    expect(res).toEqual({ status: 202, body: { event_uuid: expect.stringMatching(UUID) } });
    const event = await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    expect(event).toMatchObject({
      endpoint_uuid: endpoint.endpoint_uuid,
      body,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-1' },
      received_at: expect.stringMatching(ISO),
      delivered_at: expect.stringMatching(ISO),
      acknowledged_at: null,
      expired_at: null,
      attempts: [{ at: expect.stringMatching(ISO), status_code: 200, latency_ms: expect.any(Number) }],
    });
    expect(event.headers.cookie).toBeUndefined();
    const [received] = target.to(path);
    expect(received).toMatchObject({ method: 'POST', body, signature_valid: true });
    expect(received.headers['webhook-id']).toBe(res.body.event_uuid);
    expect(received.headers['webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature('another secret', received.headers['webhook-signature'] as string, body)).toBe(false);
    const listed = await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}/events`);
    expect(listed.body.events.map((e: any) => e.event_uuid)).toEqual([res.body.event_uuid]);
  });

  it('answers 413 past 1 MiB and stores nothing; 404 for an unknown endpoint; 422 for a body that is not UTF-8', async () => {
    const { endpoint } = await createEndpoint();
    const big = await fetch(endpoint.ingress_url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1_048_577) });
    expect(big.status).toBe(413);
    const fits = await post(endpoint.ingress_url, 'y'.repeat(1_048_576), { 'content-type': 'text/plain' });
    expect(fits.status).toBe(202);
    expect((await post(`${stackEnv.apiUrl}/api/hooks/r/00000000-0000-4000-8000-000000000000`, '{}')).status).toBe(404);
    expect((await post(`${stackEnv.apiUrl}/api/hooks/r/not-a-uuid`, '{}')).status).toBe(404);
    const binary = await fetch(endpoint.ingress_url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0xff, 0xfe]) });
    expect(binary.status).toBe(422);
    const events = (await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}/events`)).body.events;
    expect(events.map((e: any) => e.event_uuid)).toEqual([fits.body.event_uuid]);
  });

  it('refuses its own deliveries (508 loop_detected, nothing stored): a target reaching an ingress of this service cannot loop', async () => {
    const { endpoint } = await createEndpoint();
    const first = await post(endpoint.ingress_url, '{"n":1}');
    const looped = await post(endpoint.ingress_url, '{"n":1}', { 'content-type': 'application/json', 'webhook-id': first.body.event_uuid.toUpperCase() });
    expect(looped).toEqual({ status: 508, body: { error: expect.objectContaining({ code: 'loop_detected' }) } });
    const foreign = await post(endpoint.ingress_url, '{"n":2}', { 'content-type': 'application/json', 'webhook-id': '00000000-0000-4000-8000-000000000000' });
    expect(foreign.status).toBe(202);
    const events = (await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}/events`)).body.events;
    expect(events.map((e: any) => e.event_uuid).sort()).toEqual([first.body.event_uuid, foreign.body.event_uuid].sort());
  });

  it('retries a target answering 500, recording each attempt, until it answers 2xx', async () => {
    const { endpoint, path } = await createEndpoint([500, 503, 200]);
    const res = await post(endpoint.ingress_url, '{"retry":true}');
    const event = await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    expect(event.attempts.map((a: any) => a.status_code)).toEqual([500, 503, 200]);
    const times = event.attempts.map((a: any) => Date.parse(a.at));
    // The backoff the README states: 1 s, then 2 s (never sooner; later under load).
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(950);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(1_950);
    expect(target.to(path).every((r) => r.signature_valid)).toBe(true);
  });

  it('gives up after 4 attempts on a target that keeps failing: the event stays pending; replay delivers it once it recovers', async () => {
    const { endpoint, path } = await createEndpoint([500]);
    const res = await post(endpoint.ingress_url, '{"down":true}');
    const failed = await waitForEvent(res.body.event_uuid, (e) => e.attempts.length === 4, 'tried 4 times');
    expect(failed.state).toBe('pending');
    expect(failed.attempts.map((a: any) => a.status_code)).toEqual([500, 500, 500, 500]);
    target.answer(path, 200);
    const replay = await api(`/api/hooks/events/${res.body.event_uuid}/replay`, { method: 'POST' });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ event_uuid: res.body.event_uuid, workflow_id: expect.stringMatching(/^wf_/) });
    const done = await waitForTerminal(replay.body.workflow_id);
    expect(done).toMatchObject({ workflow_type: 'hook.replay-event', status: 'COMPLETED' });
    expect(done.state_data).toMatchObject({ event_uuid: res.body.event_uuid, target_status: 200, delivered_at: expect.stringMatching(ISO) });
    const event = await eventOf(res.body.event_uuid);
    expect(event.state).toBe('delivered');
    expect(event.attempts.map((a: any) => a.status_code)).toEqual([500, 500, 500, 500, 200]);
    expect(target.to(path)).toHaveLength(5);
  });

  it('does not retry a 4xx, nor follow a redirect', async () => {
    const rejected = await createEndpoint([400]);
    const a = await post(rejected.endpoint.ingress_url, '{}');
    const redirected = await createEndpoint([302]);
    const b = await post(redirected.endpoint.ingress_url, '{}');
    for (const [res, status] of [[a, 400], [b, 302]] as const) {
      const event = await waitForEvent(res.body.event_uuid, (e) => e.attempts.length === 1, 'tried once');
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await eventOf(res.body.event_uuid)).attempts.map((x: any) => x.status_code)).toEqual([status]);
      expect(event.state).toBe('pending');
    }
    expect(target.requests.filter((r) => r.path.startsWith('/latest'))).toHaveLength(0);
  });
});

describe('a worker killed during a delivery', () => {
  it('loses nothing: the lost attempt is retried once its heartbeat stops, and the event delivered', async () => {
    const { endpoint, path } = await createEndpoint(['hang', 200]);
    const res = await post(endpoint.ingress_url, '{"survives":"a kill"}');
    await waitFor('the first attempt to reach the target', async () => target.to(path).length > 0 || undefined);
    await control('kill');
    await control('start');
    const event = await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    expect(event.attempts.at(-1)).toMatchObject({ status_code: 200 });
    expect(target.to(path).length).toBeGreaterThanOrEqual(2);
    expect(target.to(path).every((r) => r.signature_valid)).toBe(true);
  });
});

describe('acknowledge, expiry, rotate-secret', () => {
  it('acknowledges an event: 200 with state acknowledged; again keeps the first time', async () => {
    const { endpoint } = await createEndpoint();
    const res = await post(endpoint.ingress_url, '{}');
    await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    const first = await api(`/api/hooks/events/${res.body.event_uuid}/acknowledge`, { method: 'POST' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ state: 'acknowledged', acknowledged_at: expect.stringMatching(ISO) });
    const again = await api(`/api/hooks/events/${res.body.event_uuid}/acknowledge`, { method: 'POST' });
    expect(again.body.acknowledged_at).toBe(first.body.acknowledged_at);
  });

  it('expires pending events past the TTL (hook.expire-pending-events) and refuses to acknowledge them (409)', async () => {
    const { endpoint } = await createEndpoint([400]);
    const pending = await post(endpoint.ingress_url, '{"old":true}');
    await waitForEvent(pending.body.event_uuid, (e) => e.attempts.length === 1, 'tried');
    const keep = await run('hook.expire-pending-events', { endpoint_uuid: endpoint.endpoint_uuid, ttl_seconds: 3600 });
    expect(keep.state_data).toMatchObject({ expired_count: 0, expired_event_uuids: [] });
    const expired = await run('hook.expire-pending-events', { endpoint_uuid: endpoint.endpoint_uuid, ttl_seconds: 0 });
    expect(expired).toMatchObject({ status: 'COMPLETED' });
    expect(expired.state_data).toMatchObject({ ttl_seconds: 0, expired_count: 1, expired_event_uuids: [pending.body.event_uuid] });
    expect(await eventOf(pending.body.event_uuid)).toMatchObject({ state: 'expired', expired_at: expect.stringMatching(ISO) });
    const ack = await api(`/api/hooks/events/${pending.body.event_uuid}/acknowledge`, { method: 'POST' });
    expect(ack.status).toBe(409);
    expect(ack.body.error.code).toBe('event_expired');
    // Expired is final: a replay would deliver it and revive it.
    const replay = await api(`/api/hooks/events/${pending.body.event_uuid}/replay`, { method: 'POST' });
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('event_expired');
    const direct = await run('hook.replay-event', { event_uuid: pending.body.event_uuid });
    expect(direct.state_data.failure_type).toBe('event_expired');
    expect(await eventOf(pending.body.event_uuid)).toMatchObject({ state: 'expired', delivered_at: null, attempts: [{ status_code: 400 }] });
  });

  it('refuses to acknowledge an event never delivered (409 event_not_delivered): pending → delivered → acknowledged', async () => {
    const { endpoint, path } = await createEndpoint([400]);
    const res = await post(endpoint.ingress_url, '{"rejected":true}');
    await waitForEvent(res.body.event_uuid, (e) => e.attempts.length === 1, 'tried');
    const ack = await api(`/api/hooks/events/${res.body.event_uuid}/acknowledge`, { method: 'POST' });
    expect(ack.status).toBe(409);
    expect(ack.body.error.code).toBe('event_not_delivered');
    expect(await eventOf(res.body.event_uuid)).toMatchObject({ state: 'pending', acknowledged_at: null });
    const failed = await run('hook.acknowledge-event', { event_uuid: res.body.event_uuid });
    expect(failed).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'event_not_delivered' } });
    target.answer(path, 200);
    const replay = await api(`/api/hooks/events/${res.body.event_uuid}/replay`, { method: 'POST' });
    await waitForTerminal(replay.body.workflow_id);
    expect((await api(`/api/hooks/events/${res.body.event_uuid}/acknowledge`, { method: 'POST' })).body.state).toBe('acknowledged');
  });

  it('rotates the secret: the new one is returned once and signs the next deliveries', async () => {
    const { endpoint, path } = await createEndpoint();
    const rotated = await api(`/api/hooks/endpoints/${endpoint.endpoint_uuid}/rotate-secret`, { method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    expect(rotated.body.signing_secret).not.toBe(endpoint.signing_secret);
    secrets['rotated secret'] = rotated.body.signing_secret;
    const res = await post(endpoint.ingress_url, '{"after":"rotation"}');
    await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    const [received] = target.to(path);
    expect(verifyWebhookSignature(rotated.body.signing_secret, received.headers['webhook-signature'] as string, received.body)).toBe(true);
    expect(verifyWebhookSignature(endpoint.signing_secret, received.headers['webhook-signature'] as string, received.body)).toBe(false);
  });
});

describe('the hook.* workflow types, each alone', () => {
  it('hook.create-redirect creates an endpoint, reuses it for the same name and target, fails endpoint_name_taken otherwise', async () => {
    const path = `/${uniqueId('created')}`;
    const name = uniqueId('redirect');
    const first = await run('hook.create-redirect', { endpoint_name: name, target_url: target.url + path });
    expect(first.status).toBe('COMPLETED');
    expect(first.state_data).toMatchObject({
      endpoint_uuid: expect.stringMatching(UUID),
      endpoint_name: name,
      target_url: target.url + path,
      secret_source: 'generated',
    });
    expect(first.state_data.ingress_url).toBe(`${stackEnv.apiUrl}/api/hooks/r/${first.state_data.endpoint_uuid}`);
    expect(JSON.stringify(first.state_data)).not.toContain('whsec_');
    const again = await run('hook.create-redirect', { endpoint_name: name, target_url: target.url + path });
    expect(again.state_data.endpoint_uuid).toBe(first.state_data.endpoint_uuid);
    const taken = await run('hook.create-redirect', { endpoint_name: name, target_url: `${target.url}/elsewhere` });
    expect(taken).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'endpoint_name_taken', failed_at: expect.stringMatching(ISO) } });
    const named = (await api('/api/hooks/endpoints')).body.endpoints.filter((e: any) => e.name === name);
    expect(named).toHaveLength(1);
  });

  it('hook.create-redirect names its endpoint after the run by default, and takes its secret from secret_ref', async () => {
    const webhookSecret = `whsec_${uniqueId('connection-secret')}`;
    secrets['connection secret'] = webhookSecret;
    const connection = await api('/api/connections', { body: { plugin: 'payments', name: uniqueId('pay'), secrets: { webhook_secret: webhookSecret } } });
    expect(connection.status).toBe(201);
    const path = `/${uniqueId('ref')}`;
    target.trust(path, webhookSecret);
    const id = await startRun('hook.create-redirect', { target_url: target.url + path, secret_ref: `${connection.body.connection_uuid}/webhook_secret` });
    const created = await waitForTerminal(id);
    expect(created.state_data).toMatchObject({ endpoint_name: `redirect-${id}`, secret_source: 'secret_ref' });
    // The connection's secret verifies provider events: the endpoint takes only events the provider signed with it.
    const body = '{"signed":"by the provider, with the connection secret"}';
    expect((await post(created.state_data.ingress_url, body)).status).toBe(400);
    const res = await post(created.state_data.ingress_url, body, { 'content-type': 'application/json', 'stripe-signature': sign(body, webhookSecret) });
    await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    expect(target.to(path)[0].signature_valid).toBe(true);
    const unknown = await run('hook.create-redirect', { target_url: target.url, secret_ref: `${connection.body.connection_uuid}/webhook_secrets.no_such_key` });
    expect(unknown.state_data.failure_type).toBe('secret_ref_not_found');
    const otherOrg = await api('/api/workflows/start', {
      token: stackEnv.tokenB,
      body: { workflow_type: 'hook.create-redirect', initial_data: { target_url: target.url, secret_ref: `${connection.body.connection_uuid}/webhook_secret` } },
    });
    const fromB = await waitForTerminal(otherOrg.body.workflow_id, stackEnv.tokenB);
    expect(fromB.state_data.failure_type).toBe('secret_ref_not_found');
  });

  it('hook.create-redirect refuses a target_url outside the outbound policy at start (422 naming it)', async () => {
    const res = await api('/api/workflows/start', { body: { workflow_type: 'hook.create-redirect', initial_data: { target_url: 'http://169.254.169.254/latest' } } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('target_url');
  });

  it('hook.receive-webhook posts to the endpoint\'s own ingress and confirms the event is stored, leaving its delivery to hook.replay-event', async () => {
    const { endpoint, path } = await createEndpoint();
    const done = await run('hook.receive-webhook', { endpoint_uuid: endpoint.endpoint_uuid });
    expect(done.status).toBe('COMPLETED');
    expect(done.state_data).toMatchObject({ event_uuid: expect.stringMatching(UUID), ingress_status: 202 });
    const event = await eventOf(done.state_data.event_uuid);
    expect(JSON.parse(event.body)).toMatchObject({ type: 'engine.test' });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await eventOf(done.state_data.event_uuid)).toMatchObject({ state: 'pending', attempts: [] });
    expect(target.to(path)).toEqual([]);
    await run('hook.replay-event', { event_uuid: done.state_data.event_uuid });
    expect(target.to(path).map((r) => r.headers['webhook-id'])).toEqual([done.state_data.event_uuid]);
    const custom = await run('hook.receive-webhook', { endpoint_uuid: endpoint.endpoint_uuid, test_event: { type: 'custom', data: { n: 7 } } });
    expect(JSON.parse((await eventOf(custom.state_data.event_uuid)).body)).toEqual({ type: 'custom', data: { n: 7 } });
    const foreign = await api('/api/workflows/start', { token: stackEnv.tokenB, body: { workflow_type: 'hook.receive-webhook', initial_data: { endpoint_uuid: endpoint.endpoint_uuid } } });
    expect((await waitForTerminal(foreign.body.workflow_id, stackEnv.tokenB)).state_data.failure_type).toBe('endpoint_not_found');
  });

  it('hook.replay-event delivers a stored event; a target answering 500 fails it target_rejected with the status', async () => {
    const { endpoint, path } = await createEndpoint([400]);
    const res = await post(endpoint.ingress_url, '{"replay":1}');
    await waitForEvent(res.body.event_uuid, (e) => e.attempts.length === 1, 'tried');
    target.answer(path, 500);
    const failed = await run('hook.replay-event', { event_uuid: res.body.event_uuid });
    expect(failed).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'target_rejected', target_status: 500 } });
    expect(failed.state_data.failure_reason).toContain('500');
    expect((await eventOf(res.body.event_uuid)).attempts).toHaveLength(5);
    target.answer(path, 204);
    const ok = await run('hook.replay-event', { event_uuid: res.body.event_uuid });
    expect(ok.state_data).toMatchObject({ event_uuid: res.body.event_uuid, target_status: 204, latency_ms: expect.any(Number), delivered_at: expect.stringMatching(ISO) });
  });

  it('hook.acknowledge-event acknowledges; an unknown event fails event_not_found', async () => {
    const { endpoint } = await createEndpoint();
    const res = await post(endpoint.ingress_url, '{}');
    await waitForEvent(res.body.event_uuid, (e) => e.state === 'delivered', 'delivered');
    const done = await run('hook.acknowledge-event', { event_uuid: res.body.event_uuid });
    expect(done.state_data).toMatchObject({ event_uuid: res.body.event_uuid, event_state: 'acknowledged', acknowledged_at: expect.stringMatching(ISO) });
    expect((await eventOf(res.body.event_uuid)).state).toBe('acknowledged');
    const unknown = await run('hook.acknowledge-event', { event_uuid: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.state_data.failure_type).toBe('event_not_found');
  });
});

describe('the public ingress', () => {
  // Its own API process, on a dead Temporal: events are stored, their deliveries cannot start.
  const extra = new ExtraApi({ TEMPORAL_ADDRESS: '127.0.0.1:1', RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT: '2', BODY_LIMIT_BYTES: '4096' });
  // A second process migrating a PGlite database of its own: on a loaded machine it may need
  // longer than ExtraApi's 30 s to listen.
  beforeAll(async () => {
    await extra.start().catch(() =>
      waitFor('the extra API to listen', async () => extra.output.includes('"API listening"') || undefined, 60_000, 200),
    );
  }, 120_000);
  afterAll(() => extra.stop());

  it('is limited per endpoint (429 past RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT), and answers 202 at once with Temporal down, the event pending', async () => {
    const { token } = JSON.parse(extra.cli(['org', 'create', uniqueId('ingress'), '--json']));
    const create = async () => {
      const res = await fetch(`${extra.url}/api/hooks/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: uniqueId('limited'), target_url: 'https://hooks.example.com/in' }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { endpoint_uuid: string }).endpoint_uuid;
    };
    const [one, two] = [await create(), await create()];
    const ingress = (id: string, route = `/api/hooks/r/${id}`) => fetch(`${extra.url}${route}`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5_000) });
    expect((await ingress(one)).status).toBe(202);
    // Paths are case-sensitive: no route, no event.
    expect((await ingress(one, `/api/Hooks/r/${one}`)).status).toBe(404);
    expect((await ingress(one)).status).toBe(202);
    // A trailing slash reaches the same handler, and so the same limit.
    const limited = await ingress(one, `/api/hooks/r/${one}/`);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as any).error.details).toMatchObject({ scope: 'ingress-endpoint', limit: 2 });
    expect((await ingress(two)).status).toBe(202);
    const events = await fetch(`${extra.url}/api/hooks/endpoints/${one}/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await events.json()) as any).events.map((e: any) => e.state)).toEqual(['pending', 'pending']);
  });

  it('refuses an ingress body over BODY_LIMIT_BYTES when an operator set it below 1 MiB (413), on both ingress routes', async () => {
    const big = 'x'.repeat(5_000);
    for (const route of ['r', 'payments']) {
      const res = await fetch(`${extra.url}/api/hooks/${route}/${crypto.randomUUID()}`, { method: 'POST', body: big, signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(413);
    }
  });
});

/** Every run of the webhook types in the organization of `token`, however it was started (the API, the ingress, a Dag). */
async function webhookRuns(token: string): Promise<string[]> {
  const types = ['hook.create-redirect', 'hook.receive-webhook', 'hook.replay-event', 'hook.acknowledge-event', 'hook.expire-pending-events', 'webhook.endpoint.create-verify-and-replay'];
  const ids: string[] = [];
  for (const type of types) {
    let cursor: string | null = null;
    do {
      const page: { body: { runs: Array<{ workflow_id: string }>; next_cursor: string | null } } = await api(
        `/api/workflows?workflow_type=${type}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      ids.push(...page.body.runs.map((w) => w.workflow_id));
      cursor = page.body.next_cursor;
    } while (cursor);
  }
  return ids;
}

describe('secrets', () => {
  it('shows no signing secret in any run, history, event or log line', async () => {
    expect(Object.keys(secrets).length).toBeGreaterThan(3);
    const places: Array<[string, string]> = [['service log', fs.readFileSync(stackEnv.logFile, 'utf8')]];
    const everyRun = new Set([...startedRuns, ...(await webhookRuns(stackEnv.tokenA))]);
    expect(everyRun.size).toBeGreaterThan(startedRuns.length);
    for (const id of everyRun) {
      places.push([`run ${id}`, JSON.stringify((await api(`/api/workflows/${id}`)).body)]);
      places.push([`history ${id}`, JSON.stringify((await api(`/api/workflows/${id}/history`)).body)]);
    }
    for (const id of await webhookRuns(stackEnv.tokenB)) {
      places.push([`run ${id} (organization B)`, JSON.stringify((await api(`/api/workflows/${id}`, { token: stackEnv.tokenB })).body)]);
    }
    places.push(['endpoints', JSON.stringify((await api('/api/hooks/endpoints')).body)]);
    expect(secretLeaks(secrets, places)).toEqual([]);
  });
});
