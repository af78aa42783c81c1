import { createHmac, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { resolveSecretRef } from '../../activities/hooks/secret-ref';
import { signatureHeader } from '../../activities/hooks/delivery';
import { HookStore, newSigningSecret } from '../../activities/hooks/store';
import { targetUrlProblem } from '../../activities/hooks/target';
import { ConnectionStore } from '../../activities/connections';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { hookEndpoints } from '../../db/schema';
import { loadConfig } from '../../src/config';
import { verifyWebhookSignature } from '../doubles/hook-target';
import { openMigratedPglite } from '../support/pglite';

describe('Webhook-Signature', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">, verified by the README snippet', () => {
    const header = signatureHeader('whsec_k', '{"a":1}', 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${createHmac('sha256', 'whsec_k').update('1700000000.{"a":1}').digest('hex')}`);
    const now = Math.floor(Date.now() / 1000);
    const fresh = signatureHeader('whsec_k', '{"a":1}', now);
    expect(verifyWebhookSignature('whsec_k', fresh, '{"a":1}')).toBe(true);
    expect(verifyWebhookSignature('whsec_k', fresh, '{"a":2}')).toBe(false);
    expect(verifyWebhookSignature('whsec_other', fresh, '{"a":1}')).toBe(false);
    expect(verifyWebhookSignature('whsec_k', header, '{"a":1}')).toBe(false);
  });

  it('generates 32-byte secrets, never the same twice', () => {
    const a = newSigningSecret();
    expect(Buffer.from(a.slice('whsec_'.length), 'base64url')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe('targetUrlProblem', () => {
  const policy = { allowHttpHosts: ['hooks.local'], outboundAllow: parseOutboundAllow('10.9.0.0/16'), publicApiUrl: 'https://api.example.com' };

  it.each([
    ['https://hooks.example.com/x', undefined],
    ['http://hooks.local/x', undefined],
    ['https://10.9.1.1/x', undefined],
    ['http://hooks.example.com/x', /https/],
    ['https://10.8.1.1/x', /private/],
    ['https://[::ffff:10.8.1.1]/x', /private/],
    ['https://API.example.com:443/api/hooks/r/x', /this service/],
    ['not a url', /absolute URL/],
  ])('%s', (url, problem) => {
    const found = targetUrlProblem(url, policy);
    if (problem) expect(found).toMatch(problem);
    else expect(found).toBeUndefined();
  });
});

describe('HookStore and secret_ref (PGlite)', () => {
  let database: DatabaseHandle;
  let hooks: HookStore;
  let connections: ConnectionStore;

  beforeAll(async () => {
    database = await openMigratedPglite();
    hooks = new HookStore(database.db, SecretBox.derive(randomBytes(32), 'hook-secrets'));
    connections = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
  });
  afterAll(() => database.close());

  it('seals the signing secret, bound to its endpoint and organization', async () => {
    const row = (await hooks.createEndpoint('org_a', { name: 'n', targetUrl: 'https://t', secret: 'whsec_plain', secretSource: 'generated' }))!;
    expect(JSON.stringify(row)).not.toContain('whsec_plain');
    expect(hooks.secretOf(row)).toBe('whsec_plain');
    expect(() => hooks.secretOf({ ...row, organizationUuid: 'org_b' })).toThrow();
    expect(await hooks.createEndpoint('org_a', { name: 'n', targetUrl: 'https://u', secret: 's', secretSource: 'generated' })).toBeUndefined();
    expect(await hooks.endpoint('org_b', row.endpointUuid)).toBeUndefined();
    await database.db.delete(hookEndpoints).where(eq(hookEndpoints.endpointUuid, row.endpointUuid));
  });

  it('makes test event marks only it can verify, each for one body and one endpoint', async () => {
    const mark = hooks.testEventMark('endpoint-1', '{"type":"engine.test"}');
    expect(hooks.isTestEventMark('endpoint-1', Buffer.from('{"type":"engine.test"}'), mark)).toBe(true);
    expect(hooks.isTestEventMark('endpoint-1', Buffer.from('{"type":"order.paid"}'), mark)).toBe(false);
    expect(hooks.isTestEventMark('endpoint-2', Buffer.from('{"type":"engine.test"}'), mark)).toBe(false);
    const otherKey = new HookStore(database.db, SecretBox.derive(randomBytes(32), 'hook-secrets'));
    expect(otherKey.isTestEventMark('endpoint-1', Buffer.from('{"type":"engine.test"}'), mark)).toBe(false);
    for (const forged of ['', 'x', 'A'.repeat(80)]) expect(hooks.isTestEventMark('endpoint-1', Buffer.from('{}'), forged)).toBe(false);
  });

  it('moves events pending → delivered → acknowledged, and expires only pending ones past the cutoff', async () => {
    const endpoint = (await hooks.createEndpoint('org_a', { name: 'e', targetUrl: 'https://t', secret: 's', secretSource: 'generated' }))!;
    const a = await hooks.insertEvent(endpoint, 'a', {});
    const b = await hooks.insertEvent(endpoint, 'b', {});
    const at = new Date().toISOString();
    await hooks.recordAttempt(a.eventUuid, { at, status_code: 500, latency_ms: 3 }, false);
    expect(await hooks.acknowledge('org_a', a.eventUuid)).toEqual({ refused: 'event_not_delivered' });
    const delivered = await hooks.recordAttempt(a.eventUuid, { at, status_code: 200, latency_ms: 4 }, true);
    expect(delivered).toMatchObject({ state: 'delivered', deliveredAt: new Date(at), attempts: [{ status_code: 500 }, { status_code: 200 }] });
    const acked = await hooks.acknowledge('org_a', a.eventUuid);
    if (!('row' in acked)) throw new Error(`not acknowledged: ${acked.refused}`);
    expect((await hooks.recordAttempt(a.eventUuid, { at, status_code: 200, latency_ms: 1 }, true)).state).toBe('acknowledged');
    expect(await hooks.acknowledge('org_b', a.eventUuid)).toEqual({ refused: 'event_not_found' });
    expect(await hooks.expirePending('org_a', endpoint.endpointUuid, new Date(Date.now() - 60_000))).toEqual([]);
    expect(await hooks.expirePending('org_a', endpoint.endpointUuid, new Date(Date.now() + 1_000))).toEqual([b.eventUuid]);
    expect(await hooks.acknowledge('org_a', b.eventUuid)).toEqual({ refused: 'event_expired' });
    expect(await hooks.acknowledge('org_a', a.eventUuid)).toMatchObject({ row: { acknowledgedAt: acked.row.acknowledgedAt } });
  });

  it('keeps an expired event expired when a delivery already on its way succeeds', async () => {
    const endpoint = (await hooks.createEndpoint('org_a', { name: 'x', targetUrl: 'https://t', secret: 's', secretSource: 'generated' }))!;
    const event = await hooks.insertEvent(endpoint, 'late', {});
    await hooks.expirePending('org_a', endpoint.endpointUuid, new Date(Date.now() + 1_000));
    const late = await hooks.recordAttempt(event.eventUuid, { at: new Date().toISOString(), status_code: 200, latency_ms: 2 }, true);
    expect(late).toMatchObject({ state: 'expired', deliveredAt: null, expiredAt: expect.any(Date), attempts: [{ status_code: 200 }] });
  });

  it("resolves secret_ref to a webhook signing secret of the organization's own payments connection, nothing else", async () => {
    const conn = (await connections.create('org_a', 'payments', 'pay', { webhook_secret: 'whsec_one', webhook_secrets: { eu: 'whsec_eu' } }, {}))!;
    const ref = (name: string) => `${conn.connectionUuid}/${name}`;
    const notFound = { refused: 'secret_ref_not_found' };
    const notAllowed = { refused: 'secret_ref_not_allowed' };
    expect(await resolveSecretRef(connections, 'org_a', ref('webhook_secret'))).toEqual({ secret: 'whsec_one' });
    expect(await resolveSecretRef(connections, 'org_a', ref('webhook_secrets.eu'))).toEqual({ secret: 'whsec_eu' });
    expect(await resolveSecretRef(connections, 'org_b', ref('webhook_secret'))).toEqual(notFound);
    for (const name of ['webhook_secrets.us', 'webhook_secrets.constructor']) {
      expect([name, await resolveSecretRef(connections, 'org_a', ref(name))]).toEqual([name, notFound]);
    }
    for (const name of ['webhook_secrets', 'webhook_secret.0', 'webhook_secret.length', 'constructor', 'api_token', 'nope']) {
      expect([name, await resolveSecretRef(connections, 'org_a', ref(name))]).toEqual([name, notAllowed]);
    }
    expect(await resolveSecretRef(connections, 'org_a', 'garbage')).toEqual(notFound);
    // Another plugin's secret is no webhook signing secret, whatever it is called.
    const esign = (await connections.create('org_a', 'esign', 'sign', { api_token: 'tok_esign', webhook_secret: 'whsec_esign' }, {}))!;
    for (const name of ['api_token', 'webhook_secret']) {
      expect([name, await resolveSecretRef(connections, 'org_a', `${esign.connectionUuid}/${name}`)]).toEqual([name, notAllowed]);
    }
  });
});

describe('PUBLIC_API_URL', () => {
  it('defaults to the API on loopback at PORT, keeps a path prefix without its trailing slash, refuses anything else', () => {
    expect(loadConfig({ PORT: '4100' }).publicApiUrl).toBe('http://127.0.0.1:4100');
    expect(loadConfig({ PUBLIC_API_URL: 'https://hooks.example.com/engine/' }).publicApiUrl).toBe('https://hooks.example.com/engine');
    for (const bad of ['hooks.example.com', 'ftp://hooks.example.com', 'https://hooks.example.com/?x=1']) {
      expect(() => loadConfig({ PUBLIC_API_URL: bad })).toThrow(/PUBLIC_API_URL/);
    }
  });
});
