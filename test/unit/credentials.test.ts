import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { ConnectionStore } from '../../activities/connections';
import { createEsignActivities } from '../../activities/esign';
import { originOf, sameOrigin } from '../../activities/origin';
import { callProvider } from '../../activities/provider-http';
import { scrubber, secretValues } from '../../activities/scrub';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { loadConfig } from '../../src/config';
import { ESIGN_VALID_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { dispatcherFor } from '../support/outbound';
import { openMigratedPglite } from '../support/pglite';

/** The pure parts of "where each credential may go": origins, scrubbing, the ESIGN_* settings, and the activity's choice. */

describe('originOf / sameOrigin', () => {
  it.each([
    ['https://Esign.Example.com/api', 'https://esign.example.com:443/other'],
    ['https://esign.example.com./api', 'https://esign.example.com/api'],
    ['http://127.0.0.1:8080/api', 'http://127.0.0.1:8080/'],
    ['http://2130706433:8080/api', 'http://127.0.0.1:8080/api'],
    ['https://[0:0:0:0:0:0:0:1]/api', 'https://[::1]/api'],
  ])('%s and %s are one origin', (a, b) => {
    expect(sameOrigin(a, b)).toBe(true);
  });

  it.each([
    ['https://esign.example.com/api', 'http://esign.example.com/api'],
    ['https://esign.example.com/api', 'https://esign.example.com:8443/api'],
    ['https://esign.example.com/api', 'https://esign.example.com.evil.test/api'],
    ['https://esign.example.com/api', 'https://evil.test/api?https://esign.example.com/api'],
    ['http://127.0.0.1:8080/api', 'http://localhost:8080/api'],
    ['https://esign.example.com/api', undefined],
    [undefined, undefined],
    ['not a url', 'not a url'],
    ['ftp://esign.example.com/api', 'ftp://esign.example.com/api'],
  ])('%s and %s are not', (a, b) => {
    expect(sameOrigin(a, b)).toBe(false);
  });

  it('an origin is scheme, host and port only', () => {
    expect(originOf('https://user@Esign.Example.com:443/api/v2.1?x#y')).toBe('https://esign.example.com');
  });
});

describe('scrubber', () => {
  const token = 'tok/en"with\\odd+chars=é';

  it('cuts a secret out as is, JSON-escaped, with \\/ and \\u escapes, escaped twice and percent-encoded', () => {
    const escaped = JSON.stringify(token).slice(1, -1);
    const spellings = [
      token,
      escaped,
      escaped.replaceAll('/', '\\/'),
      escaped.replace('é', '\\u00e9'),
      JSON.stringify(escaped).slice(1, -1),
      encodeURIComponent(token),
    ];
    const { text } = scrubber([token]);
    for (const spelling of spellings) expect(text(`before ${spelling} after`)).toBe('before [redacted] after');
  });

  it('cuts every string of a parsed answer, keys included, and leaves other values alone', () => {
    const { value } = scrubber(['s3cret-value', undefined]);
    expect(value({ message: 'bad s3cret-value', list: ['x', 's3cret-value'], n: 1, ok: true, none: null, 's3cret-value': 2 })).toEqual({
      message: 'bad [redacted]',
      list: ['x', '[redacted]'],
      n: 1,
      ok: true,
      none: null,
      '[redacted]': 2,
    });
  });

  it('cuts any Bearer or Basic credential, even one it was not given (a truncated token), but not ordinary words', () => {
    const { text } = scrubber([]);
    expect(text('got Authorization: Bearer abcdefgh12345 (truncated)')).toBe('got Authorization: Bearer [redacted] (truncated)');
    expect(text('basic  dXNlcjpwYXNzd29yZA==')).toBe('basic  [redacted]');
    expect(text('send a Bearer token')).toBe('send a Bearer token');
  });

  it('collects every string of a connection secret, named maps included', () => {
    expect(secretValues({ webhook_secret: 'a', webhook_secrets: { x: 'b', y: 'c' }, n: 1 })).toEqual(['a', 'b', 'c']);
  });
});

describe('ESIGN_API_TOKEN and ESIGN_API_BASE_URL', () => {
  it('go together: a token without the origin it belongs to is refused at start', () => {
    expect(() => loadConfig({ ESIGN_API_TOKEN: 't' })).toThrow('ESIGN_API_TOKEN is set without ESIGN_API_BASE_URL');
    expect(() => loadConfig({ ESIGN_API_TOKEN: 't', ESIGN_API_BASE_URL: 'esign.example.com/api' })).toThrow(/ESIGN_API_BASE_URL must be an absolute/);
    expect(loadConfig({ ESIGN_API_TOKEN: 't', ESIGN_API_BASE_URL: 'https://esign.example.com/api' })).toMatchObject({
      esignApiToken: 't',
      esignApiBaseUrl: 'https://esign.example.com/api',
    });
  });

  it.each(['bad\ntoken', 'tok\u0100en', 'two words'])('a token no HTTP header can carry (%j) is refused at start', (token) => {
    expect(() => loadConfig({ ESIGN_API_TOKEN: token, ESIGN_API_BASE_URL: 'https://esign.example.com/api' })).toThrow(/^ESIGN_API_TOKEN must be visible ASCII/);
  });
});

describe('callProvider', () => {
  it('refuses to send a credential to any origin but its own, before any call', async () => {
    const double = await startEsignDouble();
    try {
      const err = await callProvider(
        { allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]) },
        { method: 'GET', url: `${double.url}/v2.1`, credential: { bearer: 'tok', origin: 'https://esign.example.com' }, provider: 'e-signature API' },
      ).catch((e) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'connection_destination_mismatch', nonRetryable: true });
      expect(double.calls).toEqual([]);
    } finally {
      await double.close();
    }
  });
});

describe('esignRequest with a connection', () => {
  let database: DatabaseHandle;
  let store: ConnectionStore;
  let double: Awaited<ReturnType<typeof startEsignDouble>>;
  let elsewhere: Awaited<ReturnType<typeof startEsignDouble>>;

  beforeAll(async () => {
    database = await openMigratedPglite();
    store = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    [double, elsewhere] = await Promise.all([startEsignDouble(), startEsignDouble()]);
  });
  afterAll(async () => {
    await Promise.all([double.close(), elsewhere.close(), database.close()]);
  });

  const activities = () =>
    createEsignActivities({
      allowHttpHosts: ['127.0.0.1'],
      timeoutMs: 1_000,
      connections: store,
      dispatcher: dispatcherFor([double.url, elsewhere.url]),
    });
  const request = (connection_uuid: string, base_url?: string) => ({
    organization_uuid: 'org_unit',
    connection_uuid,
    base_url,
    method: 'DELETE' as const,
    path: `/v2.1/accounts/1/users/u/authorization/ok-${randomBytes(4).toString('hex')}`,
    token_required: true,
  });

  it("without base_url, calls the connection's base_url with its token", async () => {
    const conn = (await store.create('org_unit', 'esign', 'own', { api_token: ESIGN_VALID_TOKEN }, { base_url: double.url }))!;
    const req = request(conn.connectionUuid);
    await expect(activities().esignRequest(req)).resolves.toEqual({ status_code: 204, response: null });
    expect(double.calls.filter((c) => c.path === `/api${req.path}`).map((c) => c.authorization)).toEqual([`Bearer ${ESIGN_VALID_TOKEN}`]);
  });

  it('with a base_url of another origin, fails connection_destination_mismatch and sends nothing', async () => {
    const conn = (await store.create('org_unit', 'esign', 'moved', { api_token: 'conn-token' }, { base_url: double.url }))!;
    const err = await activities().esignRequest(request(conn.connectionUuid, elsewhere.url)).catch((e) => e);
    expect(err).toMatchObject({ type: 'connection_destination_mismatch', nonRetryable: true });
    expect(err.message).not.toContain('conn-token');
    expect(elsewhere.calls).toEqual([]);
  });
});
