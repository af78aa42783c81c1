import { type HookTarget, startHookTarget } from '../doubles/hook-target';
import { api, control, readStream, stackEnv, uniqueId, waitForState, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

/**
 * webhook.endpoint.create-verify-and-replay through the real API and worker: each layer a child
 * run readable on its own, the parent's history showing each layer, failure at a layer naming
 * it, retry resuming there, cancel reaching the running child, dry run, idempotency_key and the
 * organization binding. The target is a loopback receiver that verifies the signature.
 */

// A worker killed with a layer's activity in flight retries it after the hook activities' 30 s start-to-close timeout.
jest.setTimeout(150_000);

const TYPE = 'webhook.endpoint.create-verify-and-replay';
const STEPS = ['hook_create_redirect', 'hook_receive_webhook', 'hook_replay_event', 'hook_acknowledge_event', 'hook_expire_pending_events'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let target: HookTarget;
let secretRef: string;
let webhookSecret: string;

beforeAll(async () => {
  target = await startHookTarget();
  webhookSecret = `whsec_${uniqueId('dag-secret')}`;
  const connection = await api('/api/connections', { body: { plugin: 'payments', name: uniqueId('dag-pay'), secrets: { webhook_secret: webhookSecret } } });
  expect(connection.status).toBe(201);
  secretRef = `${connection.body.connection_uuid}/webhook_secret`;
});

afterAll(async () => {
  await target?.close();
});

/** A target path of its own that answers `statuses` and verifies the connection secret's signatures. */
function targetPath(...statuses: Array<number | 'hang'>) {
  const path = `/${uniqueId('dag')}`;
  target.answer(path, ...(statuses.length ? statuses : [200]));
  target.trust(path, webhookSecret);
  return path;
}

function inputs(path: string, extra: Record<string, unknown> = {}) {
  return { organization_uuid: stackEnv.orgA, endpoint_name: uniqueId('dag-endpoint'), target_url: target.url + path, secret_ref: secretRef, ...extra };
}

async function start(initialData: Record<string, unknown>, token = stackEnv.tokenA) {
  return api('/api/workflows/start', { token, body: { workflow_type: TYPE, initial_data: initialData } });
}

async function endpointsNamed(name: string) {
  return (await api('/api/hooks/endpoints')).body.endpoints.filter((e: { name: string }) => e.name === name);
}

const history = async (id: string) => (await api(`/api/workflows/${id}/history`)).body.transitions as Array<Record<string, any>>;

describe('webhook.endpoint.create-verify-and-replay', () => {
  it('shows its five layers in the catalog', async () => {
    const def = await api(`/api/workflows/types/${TYPE}`);
    expect(def.status).toBe(200);
    expect(def.body.kind).toBe('Dag');
    expect(def.body.layers.map((l: any) => [l.layer, l.workflow_type, l.step, l.state])).toEqual([
      ['01_hook_create_redirect', 'hook.create-redirect', 'hook_create_redirect', 'RUNNING_HOOK_CREATE_REDIRECT'],
      ['02_hook_receive_webhook', 'hook.receive-webhook', 'hook_receive_webhook', 'RUNNING_HOOK_RECEIVE_WEBHOOK'],
      ['03_hook_replay_event', 'hook.replay-event', 'hook_replay_event', 'RUNNING_HOOK_REPLAY_EVENT'],
      ['04_hook_acknowledge_event', 'hook.acknowledge-event', 'hook_acknowledge_event', 'RUNNING_HOOK_ACKNOWLEDGE_EVENT'],
      ['05_hook_expire_pending_events', 'hook.expire-pending-events', 'hook_expire_pending_events', 'RUNNING_HOOK_EXPIRE_PENDING_EVENTS'],
    ]);
    expect(def.body.layers[0].child_workflow_id).toBe('{workflow_id}.hook_create_redirect');
    expect(def.body.child_retry).toContain('attempt + 1');
    const schema = await api(`/api/workflows/types/${TYPE}/schema`);
    expect(schema.body.output_schema.properties.failed_layer).toBeDefined();
    expect(schema.body.input_schema.required).toEqual(expect.arrayContaining(['organization_uuid', 'target_url']));
  });

  it('runs the five layers as child runs; the target verifies the signed delivery', async () => {
    const path = targetPath(200);
    const initial = inputs(path, { actor: 'ops@example.test', workflow_run_id: 'ticket-42' });
    const started = await start(initial);
    expect(started.status).toBe(201);
    const id = started.body.workflow_id;
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    const data = run.state_data;
    expect(data).toMatchObject({
      organization_uuid: stackEnv.orgA,
      workflow_run_uuid: id,
      status: 'succeeded',
      actor: 'ops@example.test',
      workflow_run_id: 'ticket-42',
      compensation_trigger: null,
      compensation_results: null,
      completed_at: expect.any(String),
      warnings: [expect.stringContaining('plain http')],
      hook_create_redirect: { endpoint_uuid: expect.stringMatching(UUID), endpoint_name: initial.endpoint_name, secret_source: 'secret_ref' },
      hook_receive_webhook: { event_uuid: expect.stringMatching(UUID), ingress_status: 202 },
      hook_replay_event: { target_status: 200 },
      hook_acknowledge_event: { event_state: 'acknowledged' },
      hook_expire_pending_events: { expired_count: 0 },
    });
    const endpointUuid = data.hook_create_redirect.endpoint_uuid;
    const eventUuid = data.hook_receive_webhook.event_uuid;
    expect(data.resource_refs).toEqual({ endpoint_uuid: endpointUuid, ingress_url: data.hook_create_redirect.ingress_url, event_uuids: [eventUuid] });
    expect(data.summary.map((s: any) => [s.step, s.status, s.child_workflow_id])).toEqual(STEPS.map((s) => [s, 'succeeded', `${id}.${s}`]));
    for (const s of data.summary) expect(s.duration_ms).toBeGreaterThanOrEqual(0);

    // The test event reached the target once (layer 3; the ingress leaves it to the run), signed with the connection's secret.
    const received = target.to(path);
    expect(received.map((r) => [r.headers['webhook-id'], r.signature_valid])).toEqual([[eventUuid, true]]);
    const event = (await api(`/api/hooks/events/${eventUuid}`)).body;
    expect(event).toMatchObject({ state: 'acknowledged', attempts: [{ status_code: 200 }] });
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(1);

    // The parent's history shows each layer, naming its child; each child is a run of its own.
    const transitions = await history(id);
    expect(transitions.map((t) => t.to)).toEqual([
      'VALIDATED',
      'RUNNING_HOOK_CREATE_REDIRECT',
      'RUNNING_HOOK_RECEIVE_WEBHOOK',
      'RUNNING_HOOK_REPLAY_EVENT',
      'RUNNING_HOOK_ACKNOWLEDGE_EVENT',
      'RUNNING_HOOK_EXPIRE_PENDING_EVENTS',
      'COMPLETED',
    ]);
    transitions.slice(1, 6).forEach((t, i) => expect(JSON.stringify(t.data)).toContain(`${id}.${STEPS[i]}`));
    for (const step of STEPS) {
      const child = await api(`/api/workflows/${id}.${step}`);
      expect(child.status).toBe(200);
      expect(child.body).toMatchObject({ status: 'COMPLETED', workflow_type: `hook.${step.slice(5).replace(/_/g, '-')}` });
    }
    const stream = await readStream(id, { timeoutMs: 10_000 });
    expect(stream.events.map((e) => e.event)).toEqual([...transitions.map(() => 'transition'), 'completed']);
    const listed = await api(`/api/workflows?workflow_type=hook.replay-event&limit=100`);
    expect(JSON.stringify(listed.body)).toContain(`${id}.hook_replay_event`);
    // Another organization sees neither the parent nor its children.
    expect((await api(`/api/workflows/${id}.hook_create_redirect`, { token: stackEnv.tokenB })).status).toBe(404);
  });

  it('fails at layer 3 when the target answers 500; a retry once it recovers resumes there, with one endpoint in total', async () => {
    const path = targetPath(500);
    const initial = inputs(path);
    const id = (await start(initial)).body.workflow_id;
    const failed = await waitForTerminal(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.state_data).toMatchObject({
      status: 'failed',
      failure_type: 'target_rejected',
      failed_step: 'hook_replay_event',
      failed_layer: { layer: '03_hook_replay_event', index: 2, child_workflow_id: `${id}.hook_replay_event`, error: expect.stringContaining('500') },
      failed_at: expect.any(String),
      hook_create_redirect: { endpoint_uuid: expect.stringMatching(UUID) },
    });
    expect(failed.state_data.resource_refs.endpoint_uuid).toBe(failed.state_data.hook_create_redirect.endpoint_uuid);
    expect((await api(`/api/workflows/${id}.hook_replay_event`)).body.status).toBe('FAILED');

    target.answer(path, 200);
    const retried = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    expect(retried.body.state_name).toBe('RUNNING_HOOK_REPLAY_EVENT');
    const done = await waitForTerminal(id);
    expect(done.status).toBe('COMPLETED');
    expect(done.state_data).toMatchObject({ status: 'succeeded', hook_replay_event: { target_status: 200 } });
    expect(done.state_data.summary[2]).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(1);

    // Layers 1 and 2 ran once; layer 3's child was retried as attempt 2 of the same run.
    expect((await api(`/api/workflows/${id}.hook_create_redirect`)).body.attempt).toBe(1);
    expect((await api(`/api/workflows/${id}.hook_receive_webhook`)).body.attempt).toBe(1);
    const replay = await api(`/api/workflows/${id}.hook_replay_event`);
    expect(replay.body).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    const transitions = await history(id);
    const resumed = transitions.filter((t) => t.attempt === 2);
    expect(resumed.map((t) => [t.from, t.to])).toEqual([
      ['RUNNING_HOOK_REPLAY_EVENT', 'RUNNING_HOOK_ACKNOWLEDGE_EVENT'],
      ['RUNNING_HOOK_ACKNOWLEDGE_EVENT', 'RUNNING_HOOK_EXPIRE_PENDING_EVENTS'],
      ['RUNNING_HOOK_EXPIRE_PENDING_EVENTS', 'COMPLETED'],
    ]);
  });

  it('cancelling the parent cancels the running child', async () => {
    const path = targetPath('hang');
    const id = (await start(inputs(path))).body.workflow_id;
    await waitForState(id, 'RUNNING_HOOK_REPLAY_EVENT');
    await waitFor('the delivery to reach the target', async () => (target.to(path).length > 0 ? true : undefined));
    expect((await api(`/api/workflows/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    const cancelled = await waitForTerminal(id);
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.state_data).toMatchObject({
      failure_type: 'cancelled',
      status: 'failed',
      workflow_run_uuid: id,
      completed_at: null,
      compensation_trigger: null,
      compensation_results: null,
      resource_refs: { endpoint_uuid: expect.any(String), event_uuids: [expect.any(String)] },
    });
    // The layer the cancel reached is failed in the summary, not left running.
    expect(cancelled.state_data.summary.map((s: any) => [s.step, s.status, s.attempt])).toEqual([
      ['hook_create_redirect', 'succeeded', 1],
      ['hook_receive_webhook', 'succeeded', 1],
      ['hook_replay_event', 'failed', 1],
      ['hook_acknowledge_event', 'pending', null],
      ['hook_expire_pending_events', 'pending', null],
    ]);
    const child = await waitForTerminal(`${id}.hook_replay_event`);
    expect(child).toMatchObject({ status: 'CANCELLED', state_data: { failure_type: 'cancelled' } });
    expect((await api(`/api/workflows/${id}.hook_acknowledge_event`)).status).toBe(404);
  });

  it('a dry run checks the inputs, secret_ref and target, answers planned and creates nothing', async () => {
    const initial = inputs(targetPath(200), { dry_run: true });
    const id = (await start(initial)).body.workflow_id;
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toMatchObject({
      status: 'planned',
      warnings: [expect.stringContaining('plain http')],
      resource_refs: { endpoint_uuid: null, ingress_url: null, event_uuids: [] },
      hook_create_redirect: null,
    });
    expect(run.state_data.summary.map((s: any) => [s.layer, s.status, s.child_workflow_id])).toEqual([
      ['01_hook_create_redirect', 'planned', null],
      ['02_hook_receive_webhook', 'planned', null],
      ['03_hook_replay_event', 'planned', null],
      ['04_hook_acknowledge_event', 'planned', null],
      ['05_hook_expire_pending_events', 'planned', null],
    ]);
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(0);
    for (const step of STEPS) expect((await api(`/api/workflows/${id}.${step}`)).status).toBe(404);

    const badRef = await waitForTerminal((await start({ ...initial, secret_ref: `${secretRef.split('/')[0]}/webhook_secrets.no_such_key` })).body.workflow_id);
    expect(badRef).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'secret_ref_not_found', failed_step: 'validate' } });
    // Failed by its preflight, before any layer: the Dag outputs all the same, every layer pending.
    expect(badRef.state_data).toMatchObject({
      status: 'failed',
      workflow_run_uuid: badRef.workflow_id,
      completed_at: null,
      compensation_trigger: null,
      compensation_results: null,
      resource_refs: { endpoint_uuid: null, ingress_url: null, event_uuids: [] },
    });
    expect(badRef.state_data.summary.map((s: any) => [s.layer, s.status, s.child_workflow_id])).toEqual(STEPS.map((_, i) => [expect.stringMatching(new RegExp(`^0${i + 1}_`)), 'pending', null]));
    // Delivered under a payments webhook secret, a test event of the caller's choosing would come back with a provider's signature.
    const customEvent = await waitForTerminal((await start({ ...initial, test_event: { type: 'checkout.session.completed' } })).body.workflow_id);
    expect(customEvent).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'test_event_not_allowed', failed_step: 'validate' } });
    const generated = await waitForTerminal((await start({ ...initial, secret_ref: undefined, test_event: { type: 'custom' } })).body.workflow_id);
    expect(generated).toMatchObject({ status: 'COMPLETED', state_data: { status: 'planned' } });
    // A name that resolves to loopback passes the API's literal check; the worker resolves it and refuses.
    const inward = await waitForTerminal((await start({ ...initial, target_url: 'https://localhost/hook' })).body.workflow_id);
    expect(inward).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'target_url_refused', failed_step: 'validate' } });
    expect(inward.state_data.failure_reason).toContain('non-public address');
    const literal = await start({ ...initial, target_url: 'https://169.254.169.254/latest' });
    expect(literal.status).toBe(422);
    expect(literal.body.error.details).toEqual([expect.objectContaining({ field: 'initial_data.target_url', rule: 'outbound_policy' })]);
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(0);
  });

  it('idempotency_key: the same key in the same organization returns the first run', async () => {
    const initial = inputs(targetPath(200), { idempotency_key: uniqueId('idem') });
    const first = await start(initial);
    const second = await start(initial);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.workflow_id).toBe(first.body.workflow_id);
    expect((await waitForTerminal(first.body.workflow_id)).status).toBe('COMPLETED');
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(1);
    const otherBody = await start({ ...initial, actor: 'someone else' });
    expect(otherBody.status).toBe(409);
  });

  it("refuses an organization_uuid other than the token's with 403 organization_mismatch, starting nothing", async () => {
    const initial = inputs(targetPath(200), { organization_uuid: stackEnv.orgB });
    const res = await start(initial);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('organization_mismatch');
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(0);
    const missing = await start({ target_url: initial.target_url });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toContain('initial_data.organization_uuid');
  });

  it('refuses a start without endpoint_name (required by the spec) with 422 naming it', async () => {
    const { endpoint_name: _omitted, ...initial } = inputs(targetPath(200));
    const res = await start(initial);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'initial_data.endpoint_name', rule: 'required', message: 'is required' }]);
    const schema = (await api(`/api/workflows/types/${TYPE}/schema`)).body;
    expect(schema.input_schema.required).toContain('endpoint_name');
  });
});

describe('a worker killed while a layer is in flight', () => {
  let down = false;
  afterAll(async () => {
    // Whatever happened, leave the stack running for the suites after this one.
    if (down) await control('start');
  });

  it('loses nothing: the run completes, each layer ran once, one endpoint, contiguous history', async () => {
    // The replay's deliveries hang until the worker is killed, so the kill lands inside a layer
    // whatever the speed of the layers before it (a poll for a state that lasts ~100 ms can miss
    // it); the delivery the restarted worker retries is answered.
    const path = targetPath('hang');
    const initial = inputs(path);
    const id = (await start(initial)).body.workflow_id;
    await waitForState(id, 'RUNNING_HOOK_REPLAY_EVENT');
    await waitFor('the delivery to reach the target', async () => (target.to(path).length > 0 ? true : undefined));
    await control('kill');
    down = true;
    target.answer(path, 200);
    await control('start');
    down = false;

    const run = await waitForTerminal(id, stackEnv.tokenA, 120_000);
    expect(run).toMatchObject({ status: 'COMPLETED', attempt: 1, state_data: { status: 'succeeded' } });
    const transitions = await history(id);
    expect(transitions.map((t) => t.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(transitions.map((t) => t.to).at(-1)).toBe('COMPLETED');
    for (const step of STEPS) {
      const child = await api(`/api/workflows/${id}.${step}`);
      expect(child.body).toMatchObject({ status: 'COMPLETED', attempt: 1 });
      expect((await history(`${id}.${step}`)).map((t) => t.seq)).toEqual([1]);
    }
    expect(await endpointsNamed(initial.endpoint_name)).toHaveLength(1);
    const eventUuid = run.state_data.hook_receive_webhook.event_uuid;
    expect((await api(`/api/hooks/endpoints/${run.state_data.resource_refs.endpoint_uuid}/events`)).body.events.map((e: any) => e.event_uuid)).toEqual([eventUuid]);
    expect(target.to(path).every((r) => r.signature_valid === true)).toBe(true);
  });
});
