import { randomBytes } from 'node:crypto';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, readStream, stackEnv, startRun, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { IdentityHarness } from '../support/identity-harness';

jest.setTimeout(60_000);

describe('rate limits (an API process with tiny limits)', () => {
  const extra = new ExtraApi({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    RATE_LIMIT_STARTS_PER_MINUTE_TOKEN: '2',
    RATE_LIMIT_STARTS_PER_MINUTE_ORG: '100',
    RATE_LIMIT_READS_PER_MINUTE_TOKEN: '5',
    RATE_LIMIT_READS_PER_MINUTE_ORG: '8',
    REGISTRATIONS_PER_CLIENT: '2',
    TRUST_PROXY: 'loopback',
  });
  let first: string;
  let second: string;
  let org: string;

  const call = (path: string, token: string, body?: unknown) =>
    fetch(`${extra.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });

  beforeAll(async () => {
    await extra.start();
    const created = JSON.parse(extra.cli(['org', 'create', uniqueId('limits'), '--json']));
    org = created.organization_uuid;
    first = created.token;
    second = JSON.parse(extra.cli(['token', 'create', '--org', org, '--json'])).token;
  });
  afterAll(() => extra.stop());

  it('limits reads per token, then per organization, with 429, Retry-After and the limit in headers', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await call('/api/workflows/types', first);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-reads-token')).toBe('5');
      expect(res.headers.get('x-ratelimit-remaining-reads-token')).toBe(String(4 - i));
    }
    const limited = await call('/api/workflows/types', first);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('5');
    const body = (await limited.json()) as { error: unknown };
    expect(body.error).toMatchObject({ code: 'rate_limited', details: { scope: 'reads-token', limit: 5, window_seconds: 60 } });

    // The other token of the organization has its own budget, until the organization's (8) runs out.
    // The rejected request above counted too: 6 of the organization's 8 are used.
    expect((await call('/api/workflows/types', second)).status).toBe(200);
    expect((await call('/api/workflows/types', second)).status).toBe(200);
    const orgLimited = await call('/api/workflows/types', second);
    expect(orgLimited.status).toBe(429);
    expect(((await orgLimited.json()) as any).error.details.scope).toBe('reads-org');
  });

  it('limits starts separately from reads, however the path is spelled', async () => {
    const start = (path = '/api/workflows/start') =>
      call(path, first, {
        workflow_type: 'esign.resources.get-resource-information',
        initial_data: { base_url: 'https://esign.invalid/api' },
      });
    expect((await start()).status).toBe(201);
    // Paths are case-sensitive: this one is no route, so it starts nothing and counts nowhere.
    expect((await start('/api/Workflows/Start')).status).toBe(404);
    expect((await start()).status).toBe(201);
    // A trailing slash reaches the same handler, and so the same limit.
    const limited = await start('/api/workflows/start/');
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as any).error.details.scope).toBe('starts-token');
  });

  it('limits end-user registrations per client address, whatever their outcome; behind a trusted proxy, per forwarded address', async () => {
    // Every request comes from loopback, a trusted proxy here: the address it forwards is the client.
    // (On Postgres the limiter's rows are shared with the stack, whose suites register from loopback.)
    const client = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    const register = (forwardedFor: string) =>
      fetch(`${extra.url}/api/auth/end-user/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ client_key: 'ck_nosuchapp', email: `${uniqueId('reg')}@example.com`, password: 'a long enough password' }),
      });
    const one = client();
    expect((await register(one)).status).toBe(422);
    expect((await register(one)).status).toBe(422);
    const limited = await register(one);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3000);
    expect(((await limited.json()) as any).error).toMatchObject({ code: 'rate_limited', details: { scope: 'registrations-client' } });
    expect((await register(client())).status).toBe(422);
  });

  it('never limits the public health check', async () => {
    for (let i = 0; i < 12; i++) expect((await fetch(`${extra.url}/api/health`)).status).not.toBe(429);
  });
});

describe("end users' own budget (an in-process API with tiny limits)", () => {
  const REDIRECT = 'https://app.example.test/callback';
  let h: IdentityHarness;
  afterAll(() => h?.stop());

  it("end users exhausting their app's reads do not make an org member's reads 429", async () => {
    h = await IdentityHarness.start({ RATE_LIMIT_READS_PER_MINUTE_ORG: '6', RATE_LIMIT_READS_PER_MINUTE_APP: '4', RATE_LIMIT_READS_PER_MINUTE_TOKEN: '100' });
    const org = await h.createOrg();
    const app = await h.provisionApp(org.organization_uuid, [REDIRECT]);
    const endUserTokens = [];
    for (let i = 0; i < 3; i++) {
      const user = await h.createEndUser(app, org.organization_uuid);
      const { code, pkce } = await h.code(app.client_key, REDIRECT, (await h.signIn(user, app, org.organization_uuid)).cookie);
      endUserTokens.push((await h.jsonToken({ code, code_verifier: pkce.verifier })).body.token as string);
    }
    const [first, second, third] = endUserTokens;
    for (const token of [first, first, second, second]) expect((await h.api('/api/auth/me', token)).status).toBe(200);
    const appLimited = await h.api('/api/auth/me', third);
    expect(appLimited.status).toBe(429);
    expect(appLimited.body.error.details).toMatchObject({ scope: 'reads-app', limit: 4 });

    // The organization's members still have all 6 of theirs.
    for (let i = 0; i < 6; i++) expect((await h.api('/api/apps', org.token)).status).toBe(200);
    const orgLimited = await h.api('/api/apps', org.token);
    expect(orgLimited.status).toBe(429);
    expect(orgLimited.body.error.details.scope).toBe('reads-org');
  });
});

describe('size limits (the shared stack, default limits)', () => {
  it('rejects initial_data over its size or nesting limit with a 422 naming the rule', async () => {
    const base = { base_url: 'https://esign.invalid/api' };
    const big = await api('/api/workflows/start', {
      body: { workflow_type: 'esign.resources.get-resource-information', initial_data: { ...base, padding: 'x'.repeat(70_000) } },
    });
    expect(big.status).toBe(422);
    expect(big.body.error.details).toEqual([expect.objectContaining({ field: 'initial_data', rule: 'max_size' })]);

    let nested: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) nested = { nested };
    const deep = await api('/api/workflows/start', {
      body: { workflow_type: 'esign.resources.get-resource-information', initial_data: { ...base, nested } },
    });
    expect(deep.status).toBe(422);
    expect(deep.body.error.details).toEqual([expect.objectContaining({ field: 'initial_data', rule: 'max_depth' })]);
  });

  it('caps concurrent streams per token (the stack allows 5)', async () => {
    const token = JSON.parse(
      require('node:child_process').execFileSync(process.execPath, ['dist/src/cli.js', 'token', 'create', '--org', stackEnv.orgA, '--json'], {
        env: { ...process.env, ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : { DATA_DIR: `${process.env.TEST_WORK_DIR}/data` }) },
        encoding: 'utf8',
      }),
    ).token;
    const id = await startRun(
      'esign.authorizations.delete-user-authorization',
      // The double's own token, so the call hangs and the run stays RUNNING: a run that ends closes its streams.
      { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN, accountid: '1', userid: 'u', authorizationid: uniqueId('hang') },
      token,
    );
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const open = await Promise.all(
      controllers.map((c) =>
        fetch(`${stackEnv.apiUrl}/api/workflows/${id}/stream`, { headers: { authorization: `Bearer ${token}` }, signal: c.signal }),
      ),
    );
    expect(open.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await api(`/api/workflows/${id}/stream`, { token });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe('too_many_streams');
    expect(sixth.headers.get('retry-after')).toBe('1');
    expect((await api(`/api/workflows/${id}`, { token })).body.status).toBe('RUNNING');

    controllers[0].abort();
    await new Promise((r) => setTimeout(r, 300));
    const again = await readStream(id, { token, stopAfter: 1, timeoutMs: 1_000 });
    expect(again.status).toBe(200);
    for (const c of controllers.slice(1)) c.abort();
    expect((await api(`/api/workflows/${id}/cancel`, { token, method: 'POST' })).status).toBe(202);
  });
});
