import { decodeJwt, decodeProtectedHeader } from 'jose';
import { IdentityHarness, newPkce } from '../support/identity-harness';

const REDIRECT = 'https://app.example.test/callback';
let h: IdentityHarness;
let org: Awaited<ReturnType<IdentityHarness['createOrg']>>;
let app: Awaited<ReturnType<IdentityHarness['provisionApp']>>;
let user: { end_user_uuid: string; email: string };
let cookie: string;

beforeAll(async () => {
  h = await IdentityHarness.start();
  org = await h.createOrg();
  app = await h.provisionApp(org.organization_uuid, [REDIRECT]);
  user = await h.createEndUser(app, org.organization_uuid);
  ({ cookie } = await h.signIn(user, app, org.organization_uuid));
});

afterAll(() => h?.stop());

describe('the login host', () => {
  it('publishes OIDC discovery for the code flow with PKCE S256 and RS256', async () => {
    const res = await fetch(`${h.loginUrl}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: h.loginUrl,
      authorization_endpoint: `${h.loginUrl}/authorize`,
      token_endpoint: `${h.loginUrl}/token`,
      jwks_uri: `${h.loginUrl}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      response_modes_supported: ['query'],
      scopes_supported: expect.arrayContaining(['openid']),
      // request_uri_parameter_supported would default to true (OIDC Discovery §3).
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    });
  });

  it('sends a signed-in user back with code, state and iss; the form token endpoint answers access and ID tokens', async () => {
    const pkce = newPkce();
    const res = await h.authorize(
      { client_id: app.client_key, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'xyz', nonce: 'n-1', code_challenge: pkce.challenge, code_challenge_method: 'S256' },
      cookie,
    );
    expect(res.status).toBe(302);
    const location = new URL(res.location!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('xyz');
    expect(location.searchParams.get('iss')).toBe(h.loginUrl);
    const code = location.searchParams.get('code')!;
    expect(Buffer.from(code, 'base64url').length).toBeGreaterThanOrEqual(16);

    const token = await h.formToken({ grant_type: 'authorization_code', client_id: app.client_key, code, redirect_uri: REDIRECT, code_verifier: pkce.verifier });
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
    const access = decodeJwt(token.body.access_token);
    expect(decodeProtectedHeader(token.body.access_token)).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    expect(access).toMatchObject({
      iss: h.loginUrl,
      sub: user.end_user_uuid,
      aud: app.client_key,
      org: org.organization_uuid,
      app: app.client_uuid,
      email: user.email,
      token_type: 'end_user',
    });
    expect(access.exp! - access.iat!).toBe(600);
    expect(decodeJwt(token.body.id_token)).toMatchObject({ iss: h.loginUrl, sub: user.end_user_uuid, aud: app.client_key, nonce: 'n-1', email: user.email, email_verified: true });

    const me = await h.api('/api/auth/me', token.body.access_token);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      token_type: 'end_user',
      principal_type: 'end_user',
      user_id: user.end_user_uuid,
      organization_uuid: org.organization_uuid,
      username: user.email,
    });
  });

  it('exchanges a code at the JSON endpoint for {token, token_type, expires_in, id_token}', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, cookie);
    const res = await h.jsonToken({ code, code_verifier: pkce.verifier });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expires_in', 'id_token', 'token', 'token_type']);
    // The ID token is what an app's sign-out sends back as id_token_hint (RP-Initiated Logout).
    expect(decodeJwt(res.body.id_token)).toMatchObject({ aud: app.client_key, sub: user.end_user_uuid, sid: decodeJwt(res.body.token).sid });
    expect((await h.api('/api/auth/me', res.body.token)).body.user_id).toBe(user.end_user_uuid);
  });

  it('without a session sends the browser to the hosted sign-in page with the same parameters', async () => {
    const pkce = newPkce();
    const res = await h.authorize({ client_id: app.client_key, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    expect(res.status).toBe(302);
    const location = new URL(res.location!);
    expect(`${location.origin}${location.pathname}`).toBe(`${h.loginUrl}/sign-in`);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      client_key: app.client_key,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 's',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
  });

  it('with prompt=none and no session answers login_required with state and iss, no page', async () => {
    const res = await h.authorize({ client_key: app.client_key, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's2', prompt: 'none', code_challenge: newPkce().challenge, code_challenge_method: 'S256' });
    expect(res.status).toBe(302);
    const location = new URL(res.location!);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'login_required', state: 's2', iss: h.loginUrl });
  });

  it('serves the RS256 public keys at jwks_uri and on the API, without private parts', async () => {
    const login = (await (await fetch(`${h.loginUrl}/jwks`)).json()) as any;
    const api = await (await fetch(`${h.apiUrl}/api/auth/end-user/jwks`)).json();
    expect(api).toEqual(login);
    expect(login.keys.length).toBeGreaterThan(0);
    for (const key of login.keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String), n: expect.any(String), e: 'AQAB' });
      expect(key.d).toBeUndefined();
    }
  });

  it("lets the app's own origin call the login host's token endpoint from the browser (CORS), and no other origin", async () => {
    const preflight = await fetch(`${h.loginUrl}/token`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const stranger = await fetch(`${h.loginUrl}/jwks`, { headers: { origin: 'https://evil.example.test' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();

    const { code, pkce } = await h.code(app.client_key, REDIRECT, cookie);
    const token = await fetch(`${h.loginUrl}/token`, {
      method: 'POST',
      headers: { origin: 'https://app.example.test', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_key, code, redirect_uri: REDIRECT, code_verifier: pkce.verifier }),
    });
    expect(token.status).toBe(200);
    expect(token.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    const page = await fetch(`${h.loginUrl}/authorize?client_id=${app.client_key}`, { headers: { origin: 'https://app.example.test' }, redirect: 'manual' });
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("refuses a code of one app redeemed from another app's page, at both token endpoints, and uses the code up", async () => {
    const other = await h.provisionApp(org.organization_uuid, ['https://other.example.test/cb']);
    const fromOther = { origin: 'https://other.example.test' };
    // CORS admits the other app's origin (a preflight names no client), once AppOrigins reads it again: within a second...
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const preflight = await fetch(`${h.loginUrl}/token`, { method: 'OPTIONS', headers: { ...fromOther, 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(fromOther.origin);

    // ...but its page cannot redeem this app's code, naming this app or not.
    const form = await h.code(app.client_key, REDIRECT, cookie);
    const formAnswer = await fetch(`${h.loginUrl}/token`, {
      method: 'POST',
      headers: { ...fromOther, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_key, code: form.code, redirect_uri: REDIRECT, code_verifier: form.pkce.verifier }),
    });
    expect([formAnswer.status, await formAnswer.json()]).toEqual([400, { error: 'invalid_client', error_description: expect.stringContaining('Origin') }]);
    const json = await h.code(app.client_key, REDIRECT, cookie);
    const jsonAnswer = await fetch(`${h.apiUrl}/api/auth/end-user/token`, {
      method: 'POST',
      headers: { ...fromOther, 'content-type': 'application/json' },
      body: JSON.stringify({ code: json.code, code_verifier: json.pkce.verifier }),
    });
    expect([jsonAnswer.status, await jsonAnswer.json()]).toEqual([400, { error: 'invalid_client', error_description: expect.stringContaining('Origin') }]);

    // Neither code works any more, even from the right page.
    expect((await h.jsonToken({ code: json.code, code_verifier: json.pkce.verifier })).body.error).toBe('invalid_grant');
    expect((await h.formToken({ grant_type: 'authorization_code', client_id: app.client_key, code: form.code, redirect_uri: REDIRECT, code_verifier: form.pkce.verifier })).body.error).toBe('invalid_grant');
  });
});

describe("the login host's errors", () => {
  it("answers a token request whose body is not JSON in RFC 6749's shape", async () => {
    for (const [type, body] of [
      ['application/json', '{"grant_type": "authorization_code",'],
      ['text/plain', 'grant_type=authorization_code'],
    ]) {
      const res = await fetch(`${h.loginUrl}/token`, { method: 'POST', headers: { 'content-type': type }, body });
      expect([type, res.status, res.headers.get('cache-control')]).toEqual([type, 400, 'no-store']);
      expect(await res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    }
  });

  it('answers an oversized body 413, before any route', async () => {
    const res = await fetch(`${h.loginUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${'x'.repeat(70_000)}`,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe('payload_too_large');
  });

  /** /authorize with its first query failing as given. */
  const failingAuthorize = async (error: Error) => {
    const select = jest.spyOn(h.db, 'select').mockImplementationOnce(() => {
      throw error;
    });
    try {
      const res = await fetch(`${h.loginUrl}/authorize?client_id=${app.client_key}&redirect_uri=${encodeURIComponent(REDIRECT)}`, { redirect: 'manual' });
      return { status: res.status, headers: res.headers, text: await res.text() };
    } finally {
      select.mockRestore();
    }
  };

  it("answers a failing route in the engine's error shape, never with the error's message (a query's lists its bound values)", async () => {
    const res = await failingAuthorize(new Error(`Failed query: select * from end_users where email = $1\nparams: ${user.email}`));
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'internal_error', message: 'internal error', details: null } });
    expect(res.text).not.toContain(user.email);
  });

  it('answers 503 with Retry-After while the database is down', async () => {
    const res = await failingAuthorize(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(res.text).error.code).toBe('database_unavailable');
  });
});
