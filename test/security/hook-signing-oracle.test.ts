import { type HookTarget, startHookTarget } from '../doubles/hook-target';
import { api, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { checkoutSession, sign } from '../support/payments-events';
import { waitFor } from '../support/ports';

/**
 * A redirect endpoint as a signing oracle: its ingress is public and it signs every delivery the
 * way payment providers sign webhooks. With a payments connection's webhook secret as its signing
 * secret (secret_ref), a forged checkout posted to it would come back, at the target, with exactly
 * the signature the payments ingress accepts. So such an endpoint takes only events the provider
 * signed with that same secret; and secret_ref names webhook signing secrets only, never an API
 * token (deliveries would be HMACs under it over bodies anyone chooses).
 */

jest.setTimeout(60_000);

const WEBHOOK_SECRET = `whsec_${uniqueId('oracle')}`;

let target: HookTarget;
let paymentsConnection: string;
let esignConnection: string;

beforeAll(async () => {
  target = await startHookTarget();
  const payments = await api('/api/connections', { body: { plugin: 'payments', name: uniqueId('oracle-pay'), secrets: { webhook_secret: WEBHOOK_SECRET } } });
  expect(payments.status).toBe(201);
  paymentsConnection = payments.body.connection_uuid;
  const esign = await api('/api/connections', {
    body: { plugin: 'esign', name: uniqueId('oracle-esign'), secrets: { api_token: 'tok-oracle-suite' }, config: { base_url: stackEnv.esignUrl } },
  });
  expect(esign.status).toBe(201);
  esignConnection = esign.body.connection_uuid;
});

afterAll(async () => {
  await target?.close();
});

/** An endpoint signing with the payments connection's webhook secret; its target verifies with that secret. */
async function paymentsSecretEndpoint() {
  const path = `/${uniqueId('oracle')}`;
  target.trust(path, WEBHOOK_SECRET);
  const res = await api('/api/hooks/endpoints', {
    body: { name: uniqueId('oracle'), target_url: target.url + path, secret_ref: `${paymentsConnection}/webhook_secret` },
  });
  expect(res.status).toBe(201);
  return { endpoint: res.body, path };
}

const postTo = async (url: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, body: (await res.json()) as any };
};

const eventsOf = async (endpointUuid: string) => (await api(`/api/hooks/endpoints/${endpointUuid}/events`)).body.events as any[];

describe('an endpoint whose secret is a payments webhook secret', () => {
  it('refuses a forged, unsigned checkout at its ingress (400 naming the header), storing and delivering nothing: no signature to relay', async () => {
    const { endpoint, path } = await paymentsSecretEndpoint();
    const subject = uniqueId('forged-subject');
    const forged = JSON.stringify(checkoutSession('checkout.session.completed', { client_reference_id: subject }));
    const attempts = [
      [{}, 'SIGNATURE_MISSING'],
      [{ 'stripe-signature': sign(forged, 'whsec_the_attackers_own') }, 'SIGNATURE_MISMATCH'],
      [{ 'webhook-signature': 't=1,v1=' + '0'.repeat(64) }, 'SIGNATURE_MISMATCH'],
      [{ 'stripe-signature': sign(forged, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 3600) }, 'TIMESTAMP_OUT_OF_TOLERANCE'],
    ] as const;
    for (const [headers, code] of attempts) {
      const res = await postTo(endpoint.ingress_url, forged, headers);
      expect([code, res.status]).toEqual([code, 400]);
      expect(res.body.error).toMatchObject({ code, message: expect.stringContaining('Stripe-Signature'), details: [expect.objectContaining({ field: 'header.stripe-signature' })] });
    }
    // Only the engine's own hook.receive-webhook may mark a post as its test event.
    const marked = await postTo(endpoint.ingress_url, forged, { 'x-hook-test-event': 'AAAA' });
    expect(marked).toMatchObject({ status: 400, body: { error: { code: 'test_event_mark_invalid' } } });

    await new Promise((r) => setTimeout(r, 1_500));
    expect(await eventsOf(endpoint.endpoint_uuid)).toEqual([]);
    expect(target.to(path)).toEqual([]);
    // What the attacker is left with: the forged body and no signature the payments ingress takes.
    const relayed = await postTo(`${stackEnv.apiUrl}/api/hooks/payments/${paymentsConnection}`, forged);
    expect(relayed.status).toBe(400);
    expect((await api(`/api/entitlements?subject=${subject}`)).body.entitlements).toEqual([]);
  });

  it('forwards an event the provider signed with that secret, re-signed so the target verifies it', async () => {
    const { endpoint, path } = await paymentsSecretEndpoint();
    const genuine = JSON.stringify(checkoutSession());
    for (const header of ['stripe-signature', 'webhook-signature']) {
      const res = await postTo(endpoint.ingress_url, genuine, { [header]: sign(genuine, WEBHOOK_SECRET) });
      expect([header, res.status]).toEqual([header, 202]);
      await waitFor(`event ${res.body.event_uuid} delivered`, async () => {
        const event = (await api(`/api/hooks/events/${res.body.event_uuid}`)).body;
        return event.state === 'delivered' || undefined;
      });
    }
    const received = target.to(path);
    expect(received).toHaveLength(2);
    expect(received.map((r) => [r.body, r.signature_valid])).toEqual([
      [genuine, true],
      [genuine, true],
    ]);
  });
});

describe('secret_ref names only a webhook signing secret', () => {
  it("refuses an esign connection's api_token when an endpoint is created (422 naming secret_ref), storing nothing", async () => {
    const name = uniqueId('token-ref');
    const res = await api('/api/hooks/endpoints', { body: { name, target_url: `${target.url}/x`, secret_ref: `${esignConnection}/api_token` } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: 'secret_ref', rule: 'webhook_secret_only', message: "must name a payments connection's webhook_secret or webhook_secrets.<key>" },
    ]);
    const paymentsToken = await api('/api/hooks/endpoints', { body: { name, target_url: `${target.url}/x`, secret_ref: `${paymentsConnection}/api_token` } });
    expect(paymentsToken.status).toBe(422);
    expect(paymentsToken.body.error.details).toEqual([expect.objectContaining({ field: 'secret_ref', rule: 'webhook_secret_only' })]);
    expect((await api('/api/hooks/endpoints')).body.endpoints.filter((e: any) => e.name === name)).toEqual([]);
  });

  it("fails hook.create-redirect and the webhook Dag's validation with secret_ref_not_allowed for an api_token, creating nothing", async () => {
    const name = uniqueId('token-ref-run');
    const created = await waitForTerminal(await startRun('hook.create-redirect', { endpoint_name: name, target_url: `${target.url}/x`, secret_ref: `${esignConnection}/api_token` }));
    expect(created).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'secret_ref_not_allowed' } });
    expect(created.state_data.failure_reason).toContain('webhook_secret');
    const dag = await waitForTerminal(
      await startRun('webhook.endpoint.create-verify-and-replay', {
        organization_uuid: stackEnv.orgA,
        endpoint_name: name,
        target_url: `${target.url}/x`,
        secret_ref: `${esignConnection}/api_token`,
      }),
    );
    expect(dag).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'secret_ref_not_allowed', failed_step: 'validate' } });
    expect((await api('/api/hooks/endpoints')).body.endpoints.filter((e: any) => e.name === name)).toEqual([]);
  });
});
