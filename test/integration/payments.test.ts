import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../../activities/payload-codec';
import { api, startRun, stackEnv, uniqueId, waitForTerminal } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import {
  chargeEvent,
  checkoutSession,
  invoicePaidCurrent,
  invoicePaidLegacy,
  paymentIntentEvent,
  sign,
  signRotating,
  subscriptionEvent,
} from '../support/payments-events';

/**
 * Payments end to end on the real stack: the public ingress (raw body, the provider's signature
 * made by its own library), payments.webhooks.receive and payments.access.grant_on_payment run by
 * the real worker, entitlements read back through GET /api/entitlements.
 */
jest.setTimeout(120_000);

const RECEIVE = 'payments.webhooks.receive';
const GRANT = 'payments.access.grant_on_payment';
const CHAIN = 'payments.webhooks.receiver-chain';
/** Distinctive, so the secret checks cannot match by accident. */
const DEFAULT_SECRET = `whsec_${uniqueId('default')}`;
const OLD_SECRET = `whsec_${uniqueId('old')}`;
const ROLLED_SECRET = `whsec_${uniqueId('rolled')}`;
const RUN_SECRET = `whsec_${uniqueId('run-given')}`;
const ALL_SECRETS = [DEFAULT_SECRET, OLD_SECRET, ROLLED_SECRET, RUN_SECRET];

const conn = { a: '', namedOnly: '', b: '', esign: '' };

async function createConnection(body: Record<string, unknown>, token = stackEnv.tokenA): Promise<string> {
  const res = await api('/api/connections', { token, body });
  expect(res.status).toBe(201);
  return res.body.connection_uuid;
}

/** POSTs bytes to the ingress exactly as given. */
async function deliver(connectionUuid: string, payload: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(`${stackEnv.apiUrl}/api/hooks/payments/${connectionUuid}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const signed = (payload: string, secret = DEFAULT_SECRET, at?: number) => ({ 'stripe-signature': sign(payload, secret, at) });

/** Receiver chains the ingress started in the organization (fewer than 100 in this file). */
async function runCount(token = stackEnv.tokenA) {
  const res = await api(`/api/workflows?workflow_type=${CHAIN}&limit=100`, { token });
  return res.body.runs.length as number;
}

async function receiveRun(initialData: Record<string, unknown>) {
  const id = await startRun(RECEIVE, initialData);
  return waitForTerminal(id);
}

function expectNoSecret(value: unknown) {
  const text = JSON.stringify(value);
  for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  conn.a = await createConnection({
    plugin: 'payments',
    name: uniqueId('payments'),
    secrets: { webhook_secret: DEFAULT_SECRET, webhook_secrets: { old: OLD_SECRET, rolled: ROLLED_SECRET } },
  });
  conn.namedOnly = await createConnection({ plugin: 'payments', name: uniqueId('payments-named'), secrets: { webhook_secrets: { rolled: ROLLED_SECRET } } });
  conn.b = await createConnection({ plugin: 'payments', name: uniqueId('payments-b'), secrets: { webhook_secret: DEFAULT_SECRET } }, stackEnv.tokenB);
  conn.esign = await createConnection({ plugin: 'esign', name: uniqueId('esign'), secrets: { api_token: 'tok-payments-suite' }, config: { base_url: stackEnv.esignUrl } });
});

describe('ingress POST /api/hooks/payments/{connection_uuid}', () => {
  it('accepts a signed event: 202 only once the chain exists, whose receive step completes with the normalised fields', async () => {
    const event = checkoutSession('checkout.session.completed', { payment_status: 'unpaid' });
    const payload = JSON.stringify(event, null, 2);
    const res = await deliver(conn.a, payload, signed(payload));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ received: true, workflow_id: expect.stringMatching(/^wf_pay_[0-9a-f]{40}$/), event_id: event.id });
    expect((await api(`/api/workflows/${res.body.workflow_id}`)).body.workflow_type).toBe(CHAIN);
    const run = await waitForTerminal(res.body.workflow_id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data.receive).toMatchObject({
      event_id: event.id,
      event_type: 'checkout.session.completed',
      client_reference_id: 'user_42',
      payment_status: 'unpaid',
      route_workflow_type: null,
    });
    // Unpaid: the route layer is skipped, nothing is granted.
    expect(run.state_data.route).toBeNull();
    // The body went through byte for byte (pretty-printed JSON, not re-serialised): the receive run
    // re-verified it. Neither run echoes it (the event is what the normalised fields say).
    expect(run.state_data.payload).toBeUndefined();
    expect(run.state_data.receive.payload).toBeUndefined();
  });

  it('completes the Temporal executions of a delivery of the largest size accepted (1 MiB), its result within Temporal\'s limit', async () => {
    const subject = uniqueId('big-buyer');
    // Many small keys: JSON-escaped, a body of mostly quotes grows by a third, and it used to be in the chain's result twice.
    const items: Record<string, number> = {};
    for (let i = 0; i < 70_000; i++) items[`k${i}`] = i % 10;
    const event = checkoutSession('checkout.session.completed', { client_reference_id: subject, line_items: items, padding: '' });
    const bare = JSON.stringify(event);
    const payload = bare.replace('"padding":""', `"padding":"${'p'.repeat(1_048_576 - Buffer.byteLength(bare))}"`);
    expect(Buffer.byteLength(payload)).toBe(1_048_576);
    const res = await deliver(conn.a, payload, signed(payload));
    expect(res.status).toBe(202);
    const run = await waitForTerminal(res.body.workflow_id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data.route).toMatchObject({ subject, granted: true });
    const connection = await Connection.connect({ address: stackEnv.temporalAddress });
    try {
      const client = new Client({ connection, dataConverter: createDataConverter(Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex')) });
      for (const id of [res.body.workflow_id, `${res.body.workflow_id}.receive`, `${res.body.workflow_id}.route`]) {
        // The projection says COMPLETED just before the execution returns its result: give it a moment, not forever.
        let status = 'RUNNING';
        for (let i = 0; i < 50 && status === 'RUNNING'; i++) {
          status = (await client.workflow.getHandle(id).describe()).status.name;
          if (status === 'RUNNING') await new Promise((r) => setTimeout(r, 200));
        }
        expect({ id, status }).toEqual({ id, status: 'COMPLETED' });
      }
    } finally {
      await connection.close();
    }
    expect(['payload' in run.state_data, 'payload' in run.state_data.receive]).toEqual([false, false]);
  });

  it('answers a repeated delivery, and a replay with a fresh signature, 200 duplicate with the first workflow_id, starting nothing', async () => {
    const payload = JSON.stringify(invoicePaidCurrent());
    const first = await deliver(conn.a, payload, signed(payload));
    expect(first.status).toBe(202);
    const before = await runCount();
    const again = await deliver(conn.a, payload, signed(payload));
    expect(again).toEqual({ status: 200, body: { received: true, duplicate: true, workflow_id: first.body.workflow_id } });
    const replay = await deliver(conn.a, payload, signed(payload, DEFAULT_SECRET, Math.floor(Date.now() / 1000) + 5));
    expect(replay).toEqual({ status: 200, body: { received: true, duplicate: true, workflow_id: first.body.workflow_id } });
    expect(await runCount()).toBe(before);
  });

  it('starts one chain for concurrent deliveries of one event: one 202, the others 200 duplicate of it', async () => {
    const payload = JSON.stringify(chargeEvent('charge.refunded'));
    const before = await runCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(conn.a, payload, signed(payload))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 202]);
    expect(new Set(answers.map((a) => a.body.workflow_id)).size).toBe(1);
    expect(await runCount()).toBe(before + 1);
  });

  it('accepts Webhook-Signature, and any v1 of a rotating header signed with a named secret', async () => {
    const payload = JSON.stringify(chargeEvent());
    const res = await deliver(conn.a, payload, { 'webhook-signature': sign(payload, DEFAULT_SECRET) });
    expect(res.status).toBe(202);
    const rotated = JSON.stringify(paymentIntentEvent());
    const rolled = await deliver(conn.namedOnly, rotated, { 'stripe-signature': signRotating(rotated, ['whsec_retired_one_x', ROLLED_SECRET]) });
    expect(rolled.status).toBe(202);
    const run = await waitForTerminal(rolled.body.workflow_id);
    // The ingress names the secret that matched to the run, which verifies with the same one.
    expect(run.state_data.receive).toMatchObject({ webhook_secret_key: 'rolled', event_type: 'payment_intent.succeeded' });
    expect(run.status).toBe('COMPLETED');
  });

  it('refuses unsigned, malformed, tampered, stale and unparseable deliveries with 400 naming the reason; nothing starts', async () => {
    const before = await runCount();
    const payload = JSON.stringify(checkoutSession());
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, string | Buffer, Record<string, string>]> = [
      ['SIGNATURE_MISSING', payload, {}],
      ['SIGNATURE_MALFORMED', payload, { 'stripe-signature': 'v1=abc' }],
      ['SIGNATURE_MISMATCH', payload.replace('user_42', 'user_99'), signed(payload)],
      ['SIGNATURE_MISMATCH', payload, signed(payload, 'whsec_not_this_endpoint')],
      ['TIMESTAMP_OUT_OF_TOLERANCE', payload, signed(payload, DEFAULT_SECRET, now - 600)],
      ['TIMESTAMP_OUT_OF_TOLERANCE', payload, signed(payload, DEFAULT_SECRET, now + 600)],
      ['PAYLOAD_INVALID', 'not json', signed('not json')],
      ['PAYLOAD_INVALID', '{"id":"evt_x"}', signed('{"id":"evt_x"}')],
    ];
    for (const [code, body, headers] of cases) {
      const res = await deliver(conn.a, body, headers);
      const details = code === 'PAYLOAD_INVALID' ? null : [{ field: 'header.stripe-signature', rule: code.toLowerCase(), message: expect.any(String) }];
      expect({ code, status: res.status, body: res.body }).toEqual({ code, status: 400, body: { error: { code, message: expect.any(String), details } } });
    }
    // Signed bytes that are not UTF-8 cannot be handed on as the run's payload text.
    const latin1 = Buffer.concat([Buffer.from('{"id":"evt_'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const latin1Signature = `t=${now},v1=${createHmac('sha256', DEFAULT_SECRET).update(`${now}.`).update(latin1).digest('hex')}`;
    expect((await deliver(conn.a, latin1, { 'stripe-signature': latin1Signature })).body.error.code).toBe('PAYLOAD_INVALID');
    // The refused event was never claimed: signed properly now, it is accepted.
    expect((await deliver(conn.a, payload, signed(payload))).status).toBe(202);
    expect(await runCount()).toBe(before + 1);
  });

  it('refuses, before claiming it, an event its chain could not process: 400 naming the reason; the event stays deliverable', async () => {
    const before = await runCount();
    const now = Math.floor(Date.now() / 1000);
    const event = checkoutSession();
    const payload = JSON.stringify(event);
    // A valid signature beside an ignored element too long for the run's signature input.
    const longHeader = await deliver(conn.a, payload, { 'stripe-signature': `${sign(payload, DEFAULT_SECRET, now)},x=${'a'.repeat(8300)}` });
    expect(longHeader).toMatchObject({ status: 400, body: { error: { code: 'SIGNATURE_MALFORMED', message: expect.stringContaining('8192') } } });
    // An event id longer than the grant's event_id, a NUL in it (Postgres cannot store one).
    const longId = JSON.stringify(checkoutSession(undefined, {}, `evt_${'a'.repeat(296)}`));
    const nul = JSON.stringify(checkoutSession(undefined, {}, 'evt_\u0000x'));
    for (const [body, reason] of [
      [longId, 'event_id is 300 characters long; the limit is 255'],
      [nul, 'event_id must not contain the NUL character'],
    ]) {
      expect(await deliver(conn.a, body, signed(body))).toEqual({
        status: 400,
        body: { error: { code: 'PAYLOAD_INVALID', message: expect.stringContaining(reason), details: null } },
      });
    }
    expect(await runCount()).toBe(before);
    // Nothing was claimed: the genuine delivery of the event is accepted.
    expect((await deliver(conn.a, payload, signed(payload))).status).toBe(202);
  });

  it('reads an object kind named like an Object.prototype member as an unknown kind, its event id unchanged', async () => {
    for (const kind of ['__proto__', 'constructor', 'toString']) {
      const event = chargeEvent();
      const payload = JSON.stringify({ ...event, data: { object: { ...(event.data.object as object), object: kind, event_id: 'evt_forged' } } });
      const res = await deliver(conn.a, payload, signed(payload));
      expect({ kind, status: res.status, event_id: res.body.event_id }).toEqual({ kind, status: 202, event_id: event.id });
      const run = await waitForTerminal(res.body.workflow_id);
      expect(run.status).toBe('COMPLETED');
      expect(Object.keys(run.state_data.receive)).not.toContain('0');
      expect(run.state_data.receive).toMatchObject({ event_id: event.id, customer_id: null, payment_status: null });
    }
  });

  it('answers 404 for an unknown connection, a non-payments one and a malformed id; 413 past 1 MiB', async () => {
    const payload = JSON.stringify(checkoutSession());
    for (const id of ['6f1c2f1e-1111-4c4c-8d8d-000000000000', conn.esign, 'not-a-uuid']) {
      const res = await deliver(id, payload, signed(payload));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    const big = JSON.stringify({ ...checkoutSession(), padding: 'x'.repeat(1_048_576) });
    expect((await deliver(conn.a, big, signed(big))).status).toBe(413);
  });

  it("another organization's connection takes its own secret, its runs are its own", async () => {
    const payload = JSON.stringify(subscriptionEvent());
    const res = await deliver(conn.b, payload, signed(payload));
    expect(res.status).toBe(202);
    expect((await api(`/api/workflows/${res.body.workflow_id}`)).status).toBe(404);
    expect((await api(`/api/workflows/${res.body.workflow_id}`, { token: stackEnv.tokenB })).status).toBe(200);
  });
});

describe('the receiver chain: one signed delivery, one entitlement', () => {
  const entitlementsOf = async (subject: string) => (await api(`/api/entitlements?subject=${subject}`)).body.entitlements as any[];

  it('receive → grant → one entitlement readable through the API; the same delivery twice and a fresh-signature replay grant nothing more', async () => {
    const subject = uniqueId('buyer');
    const event = checkoutSession('checkout.session.completed', { client_reference_id: subject, metadata: { plan: 'team' } });
    const payload = JSON.stringify(event);
    const first = await deliver(conn.a, payload, signed(payload));
    expect(first.status).toBe(202);
    const chain = await waitForTerminal(first.body.workflow_id);
    expect(chain.status).toBe('COMPLETED');
    const grantRun = `${first.body.workflow_id}.route`;
    expect(chain.state_data.route).toMatchObject({ subject, granted: true, event_id: event.id, event_metadata: { plan: 'team' } });
    expect(chain.state_data.summary.map((l: any) => [l.step, l.workflow_type, l.status])).toEqual([
      ['receive', RECEIVE, 'succeeded'],
      ['route', GRANT, 'succeeded'],
    ]);
    const history = (await api(`/api/workflows/${first.body.workflow_id}/history`)).body.transitions.map((t: any) => t.to);
    expect(history).toEqual(['VALIDATED', 'RUNNING_RECEIVE', 'RUNNING_ROUTE', 'COMPLETED']);

    const again = await deliver(conn.a, payload, signed(payload));
    const replay = await deliver(conn.a, payload, signed(payload, DEFAULT_SECRET, Math.floor(Date.now() / 1000) - 7));
    for (const res of [again, replay]) expect(res).toEqual({ status: 200, body: { received: true, duplicate: true, workflow_id: first.body.workflow_id } });

    expect(await entitlementsOf(subject)).toEqual([
      {
        entitlement_uuid: chain.state_data.route.entitlement_uuid,
        subject,
        source_event_id: event.id,
        event_type: 'checkout.session.completed',
        object_id: (event.data.object as { id: string }).id,
        event_metadata: { plan: 'team' },
        workflow_id: grantRun,
        granted_at: expect.any(String),
      },
    ]);
    expectNoSecret([chain, await api(`/api/workflows/${first.body.workflow_id}/history`), await api(`/api/workflows/${grantRun}`)]);
    expectNoSecret(fs.readFileSync(stackEnv.logFile, 'utf8'));
  });

  it('routes a paid invoice (older API shape) to a grant for its customer, and skips the route for an unrouted event', async () => {
    const customer = uniqueId('cus');
    const invoice = invoicePaidLegacy({ customer });
    const p = JSON.stringify(invoice);
    const granted = await waitForTerminal((await deliver(conn.a, p, signed(p))).body.workflow_id);
    expect(granted.state_data.route).toMatchObject({ subject: customer, granted: true, subscription_id: 'sub_1PBXo5RxqlZt79sDw8eYqk1B' });
    expect((await entitlementsOf(customer)).map((e) => e.source_event_id)).toEqual([invoice.id]);

    const sub = JSON.stringify(subscriptionEvent('customer.subscription.updated'));
    const skipped = await waitForTerminal((await deliver(conn.a, sub, signed(sub))).body.workflow_id);
    expect(skipped.status).toBe('COMPLETED');
    expect(skipped.state_data.summary.map((l: any) => l.status)).toEqual(['succeeded', 'skipped']);
    expect(skipped.state_data.route).toBeNull();
  });

  it('an event naming no subject fails the chain at its route step', async () => {
    const p = JSON.stringify(checkoutSession('checkout.session.async_payment_succeeded', { client_reference_id: null, customer: null }));
    const chain = await waitForTerminal((await deliver(conn.a, p, signed(p))).body.workflow_id);
    expect(chain.status).toBe('FAILED');
    expect(chain.state_data).toMatchObject({ failure_type: 'SUBJECT_MISSING', failed_step: 'route', failed_layer: { layer: '02_route', index: 1 } });
  });
});

describe("a connection's receiver_workflow_type: a composition instead of the default chain", () => {
  /** A receiver composition's first step: the delivery's own inputs into payments.webhooks.receive. */
  const verifyStep = {
    id: 'verify',
    workflow_type: RECEIVE,
    inputs: {
      cloud_connection_uuid: { from: 'input', name: 'cloud_connection_uuid' },
      payload: { from: 'input', name: 'payload' },
      signature: { from: 'input', name: 'signature' },
    },
  };

  it('starts the composition for each verified event: receive, then a route step granting once', async () => {
    const created = await api('/api/compositions', {
      body: {
        name: uniqueId('payment-receiver'),
        steps: [
          verifyStep,
          { id: 'entitle', workflow_type: 'route', inputs: {} },
        ],
      },
    });
    expect(created.status).toBe(201);
    const receiver = created.body.workflow_type as string;
    const connection = await createConnection({
      plugin: 'payments',
      name: uniqueId('payments-composed'),
      secrets: { webhook_secret: DEFAULT_SECRET },
      config: { receiver_workflow_type: receiver },
    });
    const subject = uniqueId('composed-buyer');
    const payload = JSON.stringify(checkoutSession('checkout.session.async_payment_succeeded', { client_reference_id: subject }));
    const res = await deliver(connection, payload, signed(payload));
    expect(res.status).toBe(202);
    const run = await waitForTerminal(res.body.workflow_id);
    expect(run).toMatchObject({ workflow_type: receiver, status: 'COMPLETED' });
    expect(run.state_data.entitle).toMatchObject({ subject, granted: true });
    expect((await deliver(connection, payload, signed(payload))).body).toEqual({ received: true, duplicate: true, workflow_id: res.body.workflow_id });
    const granted = (await api(`/api/entitlements?subject=${subject}`)).body.entitlements;
    expect(granted.map((e: { workflow_id: string }) => e.workflow_id)).toEqual([`${res.body.workflow_id}.entitle`]);
  });

  it('refuses, at create and PATCH, a composition requiring an input no delivery gives (422 naming config.receiver_workflow_type)', async () => {
    const created = await api('/api/compositions', {
      body: {
        name: uniqueId('needs-a-note'),
        steps: [
          verifyStep,
          {
            id: 'grant',
            workflow_type: GRANT,
            inputs: { event_id: { from: 'step', step: 'verify', field: 'event_id' }, event_type: { from: 'input', name: 'note' } },
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const config = { receiver_workflow_type: created.body.workflow_type };
    const create = await api('/api/connections', {
      body: { plugin: 'payments', name: uniqueId('needs-a-note'), secrets: { webhook_secret: DEFAULT_SECRET }, config },
    });
    expect(create.status).toBe(422);
    expect(create.body.error.details).toEqual([
      { field: 'config.receiver_workflow_type', rule: 'receiver_inputs', message: expect.stringContaining('requires note') },
    ]);
    const connection = await createConnection({ plugin: 'payments', name: uniqueId('patched'), secrets: { webhook_secret: DEFAULT_SECRET } });
    const patch = await api(`/api/connections/${connection}`, { method: 'PATCH', body: { config } });
    expect(patch.status).toBe(422);
    expect(patch.body.error.details[0].field).toBe('config.receiver_workflow_type');
  });

  it('refuses a receiver_workflow_type that is not a composed type (422)', async () => {
    const res = await api('/api/connections', {
      body: { plugin: 'payments', name: uniqueId('bad-receiver'), secrets: { webhook_secret: DEFAULT_SECRET }, config: { receiver_workflow_type: RECEIVE } },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('receiver_workflow_type');
  });
});

describe('payments.webhooks.receive', () => {
  const base = (payload: string, signature: string, extra: Record<string, unknown> = {}) => ({
    cloud_connection_uuid: conn.a,
    payload,
    signature,
    ...extra,
  });

  it('resolves the secret in order: webhook_secret, else the named one, else the default', async () => {
    const p1 = JSON.stringify(checkoutSession());
    const given = await receiveRun(base(p1, sign(p1, RUN_SECRET), { webhook_secret: RUN_SECRET, webhook_secret_key: 'old' }));
    expect(given.status).toBe('COMPLETED');
    expect(given.state_data.webhook_secret).toBe('[redacted]');
    const p2 = JSON.stringify(checkoutSession());
    expect((await receiveRun(base(p2, sign(p2, OLD_SECRET), { webhook_secret_key: 'old' }))).status).toBe('COMPLETED');
    const p3 = JSON.stringify(checkoutSession());
    const wrongOrder = await receiveRun(base(p3, sign(p3, DEFAULT_SECRET), { webhook_secret_key: 'old' }));
    expect(wrongOrder.state_data.failure_type).toBe('SIGNATURE_MISMATCH');
    const p4 = JSON.stringify(checkoutSession());
    expect((await receiveRun(base(p4, sign(p4, DEFAULT_SECRET)))).status).toBe('COMPLETED');
    const history = (await api(`/api/workflows/${given.workflow_id}/history`)).body;
    expectNoSecret([given, history]);
  });

  it('fails closed on a missing named secret (WEBHOOK_SECRET_NOT_FOUND) and on a connection without a default', async () => {
    const p = JSON.stringify(checkoutSession());
    const missing = await receiveRun(base(p, sign(p, DEFAULT_SECRET), { webhook_secret_key: 'nope' }));
    expect(missing.state_data).toMatchObject({ failure_type: 'WEBHOOK_SECRET_NOT_FOUND', failed_layer: 2, failed_action: 'execute' });
    const noDefault = await receiveRun({ ...base(p, sign(p, ROLLED_SECRET)), cloud_connection_uuid: conn.namedOnly });
    expect(noDefault.state_data.failure_type).toBe('WEBHOOK_SECRET_NOT_FOUND');
  });

  it('fails each refusal with its own failure_type and an integer failed_layer', async () => {
    const p = JSON.stringify(checkoutSession());
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, number, Record<string, unknown>]> = [
      ['SIGNATURE_MISSING', 3, base(p, '')],
      ['SIGNATURE_MALFORMED', 3, base(p, 't=1')],
      ['SIGNATURE_MISMATCH', 3, base(p.replace('pro', 'max'), sign(p, DEFAULT_SECRET))],
      ['TIMESTAMP_OUT_OF_TOLERANCE', 3, base(p, sign(p, DEFAULT_SECRET, now - 3600))],
      ['PAYLOAD_INVALID', 4, base('{"not":"an event"}', sign('{"not":"an event"}', DEFAULT_SECRET))],
      ['connection_not_found', 2, { ...base(p, sign(p, DEFAULT_SECRET)), cloud_connection_uuid: conn.b }],
      ['connection_plugin_mismatch', 2, { ...base(p, sign(p, DEFAULT_SECRET)), cloud_connection_uuid: conn.esign }],
    ];
    for (const [type, layer, input] of cases) {
      const run = await receiveRun(input);
      expect({ type, status: run.status, ...run.state_data }).toMatchObject({
        type,
        status: 'FAILED',
        failure_type: type,
        failed_layer: layer,
        failed_action: 'execute',
        failed_at_state: 'pending',
      });
      expect(run.state_data.event_id).toBeUndefined();
    }
    // None of the refused runs claimed the event: a genuine delivery of it is accepted.
    expect((await receiveRun(base(p, sign(p, DEFAULT_SECRET)))).status).toBe('COMPLETED');
  });

  it('claims no event verified with a secret the caller chose: the provider\'s own delivery of it is still accepted', async () => {
    const subject = uniqueId('claimed-by-nobody');
    const p = JSON.stringify(checkoutSession('checkout.session.completed', { client_reference_id: subject }));
    const forged = await receiveRun(base(p, sign(p, RUN_SECRET), { webhook_secret: RUN_SECRET }));
    expect(forged.status).toBe('COMPLETED');
    const delivered = await deliver(conn.a, p, signed(p));
    expect(delivered.status).toBe(202);
    expect((await waitForTerminal(delivered.body.workflow_id)).state_data.route).toMatchObject({ subject, granted: true });
    // Given as webhook_secret, the connection's own secret proves as much as the stored one: the event is claimed.
    const q = JSON.stringify(checkoutSession());
    expect((await receiveRun(base(q, sign(q, DEFAULT_SECRET), { webhook_secret: DEFAULT_SECRET }))).status).toBe('COMPLETED');
    expect((await deliver(conn.a, q, signed(q))).body.duplicate).toBe(true);
  });

  it('fails a replayed event id on the same connection with EVENT_REPLAYED, even freshly signed', async () => {
    const p = JSON.stringify(invoicePaidLegacy());
    const first = await receiveRun(base(p, sign(p, DEFAULT_SECRET)));
    expect(first.status).toBe('COMPLETED');
    expect(first.state_data).toMatchObject({ subscription_id: 'sub_1PBXo5RxqlZt79sDw8eYqk1B', route_workflow_type: GRANT });
    const replay = await receiveRun(base(p, sign(p, DEFAULT_SECRET, Math.floor(Date.now() / 1000) - 3)));
    expect(replay.state_data).toMatchObject({ failure_type: 'EVENT_REPLAYED', failed_layer: 4 });
    // A delivery of it to the ingress is a duplicate of the run that accepted it.
    const delivered = await deliver(conn.a, p, signed(p));
    expect(delivered).toEqual({ status: 200, body: { received: true, duplicate: true, workflow_id: first.workflow_id } });
  });

  it('normalises and routes each event type', async () => {
    const cases: Array<[object, string | null]> = [
      [checkoutSession(), GRANT],
      [checkoutSession('checkout.session.completed', { payment_status: 'unpaid' }), null],
      [checkoutSession('checkout.session.async_payment_succeeded'), GRANT],
      [invoicePaidCurrent(), GRANT],
      [subscriptionEvent(), null],
      [paymentIntentEvent(), null],
      [chargeEvent(), null],
    ];
    for (const [event, route] of cases) {
      const p = JSON.stringify(event);
      const run = await receiveRun(base(p, sign(p, DEFAULT_SECRET)));
      expect(run.state_data).toMatchObject({ event_id: (event as { id: string }).id, route_workflow_type: route, livemode: false });
    }
  });

  it('is refused at start without its required inputs (422 naming them)', async () => {
    const res = await api('/api/workflows/start', { body: { workflow_type: RECEIVE, initial_data: { payload: '{}' } } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toContain('initial_data.cloud_connection_uuid');
    expect(res.body.error.message).toContain('initial_data.signature');
  });
});

describe('payments.access.grant_on_payment and GET /api/entitlements', () => {
  const grantInput = (eventId: string, extra: Record<string, unknown> = {}) => ({
    event_id: eventId,
    event_type: 'checkout.session.completed',
    object_id: 'cs_test_a1',
    client_reference_id: null,
    customer_id: null,
    event_metadata: { plan: 'pro' },
    ...extra,
  });

  it('grants once per source event in the organization, to client_reference_id else customer_id', async () => {
    const subject = uniqueId('user');
    const eventId = uniqueId('evt');
    const first = await waitForTerminal(await startRun(GRANT, grantInput(eventId, { client_reference_id: subject, customer_id: 'cus_x' })));
    expect(first.state_data).toMatchObject({ subject, granted: true, entitlement_uuid: expect.any(String) });
    const again = await waitForTerminal(await startRun(GRANT, grantInput(eventId, { client_reference_id: subject })));
    expect(again.state_data).toMatchObject({ subject, granted: false, entitlement_uuid: first.state_data.entitlement_uuid });
    const customer = uniqueId('cus');
    const byCustomer = await waitForTerminal(await startRun(GRANT, grantInput(uniqueId('evt'), { customer_id: customer })));
    expect(byCustomer.state_data).toMatchObject({ subject: customer, granted: true });

    const list = await api(`/api/entitlements?subject=${subject}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      entitlements: [
        {
          entitlement_uuid: first.state_data.entitlement_uuid,
          subject,
          source_event_id: eventId,
          event_type: 'checkout.session.completed',
          object_id: 'cs_test_a1',
          event_metadata: { plan: 'pro' },
          workflow_id: first.workflow_id,
          granted_at: expect.any(String),
        },
      ],
      next_cursor: null,
    });
    expect((await api(`/api/entitlements?subject=${subject}`, { token: stackEnv.tokenB })).body.entitlements).toEqual([]);
    // The same event id in another organization is that organization's own grant.
    const other = await waitForTerminal(await startRun(GRANT, grantInput(eventId, { client_reference_id: subject }), stackEnv.tokenB), stackEnv.tokenB);
    expect(other.state_data.granted).toBe(true);
  });

  it('fails SUBJECT_MISSING when the event names nobody', async () => {
    const run = await waitForTerminal(await startRun(GRANT, grantInput(uniqueId('evt'))));
    expect(run.state_data).toMatchObject({ failure_type: 'SUBJECT_MISSING', failed_action: 'execute' });
  });

  it('lists newest first with a cursor, and refuses a forged cursor and a bad limit', async () => {
    const subject = uniqueId('pager');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await waitForTerminal(await startRun(GRANT, grantInput(uniqueId('evt'), { client_reference_id: subject })));
      ids.push(run.state_data.entitlement_uuid);
    }
    const page1 = await api(`/api/entitlements?subject=${subject}&limit=2`);
    expect(page1.body.entitlements.map((e: { entitlement_uuid: string }) => e.entitlement_uuid)).toEqual([ids[2], ids[1]]);
    const page2 = await api(`/api/entitlements?subject=${subject}&limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toEqual({ entitlements: [expect.objectContaining({ entitlement_uuid: ids[0] })], next_cursor: null });
    const all = await api('/api/entitlements?limit=100');
    expect(all.body.entitlements.length).toBeGreaterThanOrEqual(3);
    expect((await api('/api/entitlements?cursor=Zm9yZ2Vk')).status).toBe(400);
    expect((await api('/api/entitlements?limit=0')).status).toBe(422);
    expect((await api('/api/entitlements', { token: null })).status).toBe(401);
  });
});

describe('ingress rate limits: an API process with tiny limits, behind a trusted proxy', () => {
  const extra = new ExtraApi({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT: '3',
    RATE_LIMIT_INGRESS_REFUSED_PER_MINUTE_CLIENT: '5',
    TRUST_PROXY: 'loopback',
  });
  let connection: string;
  beforeAll(async () => {
    await extra.start();
    const { token } = JSON.parse(extra.cli(['org', 'create', uniqueId('ingress-limits'), '--json']));
    const res = await fetch(`${extra.url}/api/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'payments', name: uniqueId('limited'), secrets: { webhook_secret: DEFAULT_SECRET } }),
    });
    expect(res.status).toBe(201);
    connection = ((await res.json()) as { connection_uuid: string }).connection_uuid;
  }, 120_000);
  afterAll(() => extra.stop());

  const address = () => `2001:db8:${randomBytes(2).toString('hex')}::1`;
  const post = (forwardedFor: string, body: string, signature: string, to = connection) =>
    fetch(`${extra.url}/api/hooks/payments/${to}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor, 'stripe-signature': signature },
      body,
    });
  const junk = (from: string, to?: string) => post(from, '{}', `t=1,v1=${'0'.repeat(64)}`, to);

  it('counts refused requests per client address, never against the connection: junk does not block a genuine delivery', async () => {
    const attacker = address();
    for (let i = 0; i < 5; i++) expect((await junk(attacker, i % 2 ? crypto.randomUUID() : connection)).status).toBe(i % 2 ? 404 : 400);
    const limited = await junk(attacker);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as any).error).toMatchObject({ code: 'rate_limited', details: { scope: 'ingress-refused-client', limit: 5 } });
    // Another sender's refusals are its own.
    expect((await junk(address())).status).toBe(400);
    // A genuine delivery is verified before any refusal budget is looked at, even from the blocked address.
    const payload = JSON.stringify(chargeEvent());
    const genuine = await post(attacker, payload, sign(payload, DEFAULT_SECRET));
    expect(genuine.status).toBe(202);
    expect(genuine.headers.get('x-ratelimit-remaining-ingress-endpoint')).toBe('2');
  });

  it('counts verified deliveries against the connection (429 past RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT)', async () => {
    const payload = JSON.stringify(chargeEvent());
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push((await post(address(), payload, sign(payload, DEFAULT_SECRET))).status);
    // The first test's delivery spent one of the 3: one 202, one duplicate, then the limit.
    expect(answers).toEqual([202, 200, 429]);
    const limited = await post(address(), payload, sign(payload, DEFAULT_SECRET));
    expect(((await limited.json()) as any).error.details).toMatchObject({ scope: 'ingress-endpoint', limit: 3 });
  });
});
