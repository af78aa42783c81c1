import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ConflictError, NotFoundError, ValidationError, WorkflowFailedError } from '@workflow-engine/sdk';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { type HookTarget, startHookTarget } from '../doubles/hook-target';
import { totpCode } from '../../src/accounts/totp';
import { Browser, endUserToken, provisionApp, verifiedAccount } from '../support/accounts';
import { api, stackEnv, uniqueId } from '../support/api';
import { waitFor } from '../support/ports';
import { DELETE, deleteInput, engineFor, RESOURCES } from '../support/sdk';

// Cancel and schedules (issue 16, built on another branch): written against the shared contract;
// then the hooks, compositions, entitlements and apps managers.
jest.setTimeout(60_000);

const BIN = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'wfe');
function wfe(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = { PATH: process.env.PATH, WFE_URL: stackEnv.apiUrl, WFE_TOKEN: stackEnv.tokenA };
    execFile(process.execPath, [BIN, ...args], { env, timeout: 45_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('SDK: cancel', () => {
  const engine = engineFor();

  it('handle.cancel() ends a running run CANCELLED: wait() throws failure_type cancelled, the list filters it, retry re-drives it', async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    expect(await run.cancel()).toEqual({ workflow_id: run.workflowId, cancel_requested: true });
    const err = await run.wait({ timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).failureType).toBe('cancelled');
    expect(await run.get()).toMatchObject({
      status: 'CANCELLED',
      is_terminal: true,
      state_data: expect.objectContaining({ failure_type: 'cancelled' }),
    });

    const cancelled: string[] = [];
    for await (const r of await engine.workflows.list({ status: 'CANCELLED' })) cancelled.push(r.workflow_id);
    expect(cancelled).toContain(run.workflowId);

    await expect(engine.workflows.cancel(run.workflowId)).rejects.toMatchObject({
      constructor: ConflictError,
      status: 409,
      code: 'run_not_running',
    });
    expect((await run.retry()).workflow_id).toBe(run.workflowId);
    await run.cancel();
  });

  it("another organization's run is a 404 and stays running", async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    await expect(engineFor(stackEnv.tokenB).workflows.cancel(run.workflowId)).rejects.toBeInstanceOf(NotFoundError);
    expect((await run.get()).status).toBe('RUNNING');
    await run.cancel();
  });

  it('wfe cancel <id>: exit 0, then 1 once the run has ended', async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    const first = await wfe(['cancel', run.workflowId]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${run.workflowId} cancel requested`);
    await expect(run.wait({ timeoutMs: 30_000 })).rejects.toBeInstanceOf(WorkflowFailedError);
    const again = await wfe(['cancel', run.workflowId, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { status: 409, code: 'run_not_running' } });
  });
});

describe('SDK: schedules', () => {
  const engine = engineFor();

  it('create, get, list, pause, unpause, trigger (its run listed by schedule_id), delete; secrets redacted', async () => {
    const created = await engine.schedules.create({
      workflow_type: RESOURCES,
      initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN },
      interval_seconds: 3600,
    });
    expect(created).toMatchObject({
      schedule_id: expect.stringMatching(/^sch_/),
      workflow_type: RESOURCES,
      initial_data: { base_url: stackEnv.esignUrl, api_token: '[redacted]' },
      cron: null,
      interval_seconds: 3600,
      timezone: 'UTC',
      overlap: 'skip',
      paused: false,
    });
    expect(JSON.stringify(created)).not.toContain(ESIGN_VALID_TOKEN);
    const id = created.schedule_id;

    expect(await engine.schedules.get(id)).toMatchObject({ schedule_id: id });
    expect((await engine.schedules.list()).map((s) => s.schedule_id)).toContain(id);
    expect((await engine.schedules.pause(id)).paused).toBe(true);
    expect((await engine.schedules.unpause(id)).paused).toBe(false);
    expect(await engine.schedules.trigger(id)).toEqual({ schedule_id: id, triggered: true });
    const started = await waitFor('the triggered run', async () => (await engine.workflows.list({ schedule_id: id })).runs[0], 30_000, 250);
    expect(started.workflow_type).toBe(RESOURCES);

    await expect(engineFor(stackEnv.tokenB).schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await engine.schedules.delete(id);
    await expect(engine.schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a schedule with both cron and interval_seconds is a ValidationError', async () => {
    const body = { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl }, cron: '0 * * * *', interval_seconds: 60 };
    const err = await engine.schedules.create(body as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(422);
    expect((err as ValidationError).fields.length).toBeGreaterThan(0);
  });
});

describe('SDK: hooks', () => {
  const engine = engineFor();
  let target: HookTarget;
  beforeAll(async () => {
    target = await startHookTarget();
  });
  afterAll(() => target?.close());

  it('createEndpoint (signing_secret once), get, list, events signed with it, rotateSecret, replay, acknowledge, deleteEndpoint', async () => {
    const path = `/${uniqueId('sdk-hook')}`;
    const created = await engine.hooks.createEndpoint({ name: uniqueId('sdk-endpoint'), target_url: target.url + path });
    const { signing_secret: secret, ...view } = created;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(view).toMatchObject({ target_url: target.url + path, secret_source: 'generated', secret_ref: null, state: 'active' });
    target.trust(path, secret!);
    const id = created.endpoint_uuid;
    expect(await engine.hooks.getEndpoint(id)).toEqual(view);
    const listed = await engine.hooks.listEndpoints();
    expect(listed).toContainEqual(view);
    expect(JSON.stringify(listed)).not.toContain(secret);

    const ingress = await fetch(created.ingress_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    expect(ingress.status).toBe(202);
    const { event_uuid: eventUuid } = (await ingress.json()) as { event_uuid: string };
    const delivered = await waitFor('the delivery', async () => {
      const event = await engine.hooks.getEvent(eventUuid);
      return event.state === 'delivered' ? event : undefined;
    });
    expect(delivered).toMatchObject({ endpoint_uuid: id, body: '{"n":1}', attempts: [expect.objectContaining({ status_code: 200 })] });
    expect(target.to(path).map((r) => r.signature_valid)).toEqual([true]);
    expect((await engine.hooks.listEvents(id, { limit: 5 })).map((e) => e.event_uuid)).toEqual([eventUuid]);

    const rotated = await engine.hooks.rotateSecret(id);
    expect(rotated.signing_secret).toMatch(/^whsec_/);
    expect(rotated.signing_secret).not.toBe(secret);
    expect(await engine.hooks.getEndpoint(id)).not.toHaveProperty('signing_secret');
    target.trust(path, rotated.signing_secret);
    const replayed = await engine.hooks.replayEvent(eventUuid);
    expect(replayed).toEqual({ event_uuid: eventUuid, workflow_id: expect.any(String) });
    await engine.workflows.handle(replayed.workflow_id).wait({ timeoutMs: 30_000 });
    expect(target.to(path).map((r) => r.signature_valid)).toEqual([true, true]);

    expect((await engine.hooks.acknowledgeEvent(eventUuid)).state).toBe('acknowledged');
    await expect(engineFor(stackEnv.tokenB).hooks.getEndpoint(id)).rejects.toBeInstanceOf(NotFoundError);
    await engine.hooks.deleteEndpoint(id);
    await expect(engine.hooks.getEndpoint(id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(engine.hooks.getEvent(eventUuid)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a target outside the outbound policy is a ValidationError naming target_url', async () => {
    const err = await engine.hooks.createEndpoint({ name: uniqueId('n'), target_url: 'http://example.com/hook' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).fields).toEqual([expect.objectContaining({ field: 'target_url', rule: 'outbound_policy' })]);
  });
});

describe('SDK: compositions', () => {
  const engine = engineFor();
  const steps = [
    { id: 'info', workflow_type: RESOURCES, inputs: { base_url: { from: 'input', name: 'base_url' }, api_token: { from: 'input', name: 'api_token' } } },
  ] as const;

  it('create from a built-in type, list, get, update to version 2; the new type runs', async () => {
    const created = await engine.compositions.create({ name: 'sdk-resources', steps: [...steps] });
    const id = created.composition_uuid;
    expect(created).toMatchObject({ version: 1, workflow_type: `virtual.${id}@1` });
    expect(Object.keys((created.input_schema as { properties: object }).properties).sort()).toEqual(['api_token', 'base_url']);
    expect((await engine.compositions.list()).find((c) => c.composition_uuid === id)).toMatchObject({ name: 'sdk-resources', version: 1 });

    const updated = await engine.compositions.update(id, { name: 'sdk-resources v2', steps: [...steps], exposed_to_end_users: true });
    expect(updated).toMatchObject({ composition_uuid: id, version: 2, workflow_type: `virtual.${id}@2` });
    const detail = await engine.compositions.get(id);
    expect(detail).toMatchObject({ name: 'sdk-resources v2', version: 2, exposed_to_end_users: true, steps: [expect.objectContaining({ id: 'info' })] });
    expect(detail.versions.map((v) => v.version)).toEqual([2, 1]);

    const run = await engine.workflows.start(updated.workflow_type, { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN });
    expect(await run.wait({ timeoutMs: 45_000 })).toHaveProperty('info');
    await expect(engineFor(stackEnv.tokenB).compositions.get(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an unknown step type is a ValidationError naming the step', async () => {
    const err = await engine.compositions.create({ name: 'bad', steps: [{ id: 'a', workflow_type: 'no.such.type' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).fields).toEqual([expect.objectContaining({ field: 'steps.0.workflow_type', rule: 'unknown_type' })]);
  });
});

describe('SDK: entitlements', () => {
  const engine = engineFor();
  it('list: a page with next_cursor, iterable; subject, limit and cursor reach the API', async () => {
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    const recorded = engineFor(stackEnv.tokenA, { fetch: recording });
    const page = await recorded.entitlements.list({ subject: 'nobody-sdk', limit: 5 });
    expect(page).toMatchObject({ entitlements: [], next_cursor: null });
    const all = [];
    for await (const e of page) all.push(e);
    expect(all).toEqual([]);
    expect(new URL(urls[0]).searchParams.toString()).toBe('subject=nobody-sdk&limit=5');

    const err = await recorded.entitlements.list({ cursor: 'not-a-cursor' }).catch((e: unknown) => e);
    expect(new URL(urls[1]).searchParams.get('cursor')).toBe('not-a-cursor');
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_cursor' });
    expect((err as ValidationError).fields).toEqual([expect.objectContaining({ field: 'cursor' })]);
  });

  it('list: iterating a page walks every later page, newest first, each entitlement once', async () => {
    const subject = uniqueId('sdk-pager');
    const granted: string[] = [];
    for (let i = 0; i < 5; i++) {
      const run = await engine.workflows.start('payments.access.grant_on_payment', {
        event_id: uniqueId('evt'),
        event_type: 'checkout.session.completed',
        object_id: 'cs_sdk',
        client_reference_id: subject,
        customer_id: null,
        event_metadata: {},
      });
      granted.push(String((await run.wait({ timeoutMs: 60_000 })).entitlement_uuid));
    }
    const page = await engine.entitlements.list({ subject, limit: 2 });
    expect(page.entitlements).toHaveLength(2);
    expect(page.next_cursor).toEqual(expect.any(String));
    const walked: string[] = [];
    for await (const e of page) walked.push(e.entitlement_uuid);
    expect(walked).toEqual([...granted].reverse());
  });
});

const PASSWORD = 'correct horse battery staple';

describe('SDK: apps', () => {
  it('list holds the app an identity.app.provision run started through the SDK created, for its organization only', async () => {
    const engine = engineFor();
    const run = await engine.workflows.start<{ client_key: string }>('identity.app.provision', {
      name: uniqueId('sdk-app'),
      redirect_uris: ['https://sdk.example.test/cb'],
    });
    const { client_key } = await run.wait({ timeoutMs: 45_000 });
    const apps = await engine.apps.list();
    expect(apps.find((a) => a.client_key === client_key)).toMatchObject({
      client_uuid: expect.any(String),
      redirect_uris: ['https://sdk.example.test/cb'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await engineFor(stackEnv.tokenB).apps.list()).map((a) => a.client_key)).not.toContain(client_key);
  });

  it("clearEndUserTotp turns an end user's TOTP off, for the organization's own apps only", async () => {
    const app = await provisionApp();
    const email = await verifiedAccount(app, PASSWORD);
    const token = await endUserToken(app, new Browser(), email, PASSWORD);
    const enrol = () => api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } });
    const { secret } = (await enrol()).body;
    expect((await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: totpCode(secret) } })).status).toBe(200);
    expect((await enrol()).status).toBe(409);
    const endUserUuid = (await api('/api/auth/me', { token })).body.user_id as string;

    await expect(engineFor(stackEnv.tokenB).apps.clearEndUserTotp(app.client_uuid, endUserUuid)).rejects.toBeInstanceOf(NotFoundError);
    await expect(engineFor().apps.clearEndUserTotp(app.client_uuid, randomUUID())).rejects.toThrow(/end user/);
    await engineFor().apps.clearEndUserTotp(app.client_uuid, endUserUuid);
    expect((await enrol()).status).toBe(200);
  });
});
