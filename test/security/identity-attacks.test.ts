import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { base64url, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { authorizationCodes, loginSessions, runs } from '../../db/schema';
import { revokeLoginSession } from '../../src/identity/login-sessions';
import { IdentityHarness, newPkce } from '../support/identity-harness';

/**
 * Attacks on end-user sign-in (issue 11), each refused with nothing issued. The API and the
 * login host run in this process on a PGlite of their own, seeded directly.
 */
const REDIRECT = 'https://app.example.test/callback';
const OTHER_REDIRECT = 'https://app.example.test/other';
let h: IdentityHarness;
let org: Awaited<ReturnType<IdentityHarness['createOrg']>>;
let app: Awaited<ReturnType<IdentityHarness['provisionApp']>>;
let otherApp: Awaited<ReturnType<IdentityHarness['provisionApp']>>;
let user: { end_user_uuid: string; email: string };
let session: { cookie: string; sid: string };

beforeAll(async () => {
  // Open streams re-check their token this often.
  h = await IdentityHarness.start({ TOKEN_CACHE_TTL_MS: '1000' });
  org = await h.createOrg();
  app = await h.provisionApp(org.organization_uuid, [REDIRECT, OTHER_REDIRECT, 'http://127.0.0.1:5173/cb?x=1']);
  otherApp = await h.provisionApp(org.organization_uuid, [REDIRECT]);
  user = await h.createEndUser(app, org.organization_uuid);
  session = await h.signIn(user, app, org.organization_uuid);
});

afterAll(() => h?.stop());

const codeRow = async (code: string) =>
  (await h.db.select().from(authorizationCodes).where(eq(authorizationCodes.codeHash, createHash('sha256').update(code).digest('hex'))))[0];

const exchange = (code: string, verifier: string, overrides: Record<string, string> = {}) =>
  h.formToken({ grant_type: 'authorization_code', client_id: app.client_key, code, redirect_uri: REDIRECT, code_verifier: verifier, ...overrides });

async function validToken() {
  const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
  const res = await exchange(code, pkce.verifier);
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

/** A token as ours would be, changed where `tamper` says, signed with our current key. */
async function forged(tamper: { iss?: string; aud?: string; exp?: number; sid?: string } = {}) {
  const claims = decodeJwt(await validToken());
  const { kid, key } = await h.identity.keys.signingKey();
  return new SignJWT({ ...claims, ...(tamper.sid ? { sid: tamper.sid } : {}) })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(tamper.iss ?? (claims.iss as string))
    .setAudience(tamper.aud ?? (claims.aud as string))
    .setExpirationTime(tamper.exp ?? (claims.exp as number))
    .sign(key);
}

const expectRefused = async (token: string) => {
  const me = await h.api('/api/auth/me', token);
  expect(me.status).toBe(401);
  expect(me.body.error.code).toBe('unauthorized');
};

const expectNothingIssued = (res: { status: number; body: any }, error = 'invalid_grant') => {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error, error_description: expect.any(String) });
};

/** After a refused attempt, the right request for the same code is refused too: the attempt used it up. */
async function expectUsedUp(code: string, verifier: string) {
  expect((await codeRow(code)).redeemedAt).not.toBeNull();
  expectNothingIssued(await exchange(code, verifier));
}

describe('code exchange', () => {
  it('refuses a wrong code_verifier, and the code is used up: no second guess', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await exchange(code, newPkce().verifier));
    await expectUsedUp(code, pkce.verifier);
  });

  it('uses the code up at the JSON endpoint too', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await h.jsonToken({ code, code_verifier: newPkce().verifier }));
    expectNothingIssued(await h.jsonToken({ code, code_verifier: pkce.verifier }));
  });

  it('refuses a code_verifier outside RFC 7636 (too short)', async () => {
    const { code } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await h.jsonToken({ code, code_verifier: 'short' }), 'invalid_request');
  });

  it('refuses a reused code and revokes the tokens its first use issued', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const first = await exchange(code, pkce.verifier);
    expect(first.status).toBe(200);
    expect((await h.api('/api/auth/me', first.body.access_token)).status).toBe(200);
    expectNothingIssued(await exchange(code, pkce.verifier));
    await expectRefused(first.body.access_token);
  });

  it('refuses a reused code at the JSON endpoint too', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const first = await h.jsonToken({ code, code_verifier: pkce.verifier });
    expect(first.status).toBe(200);
    expectNothingIssued(await h.jsonToken({ code, code_verifier: pkce.verifier }));
    await expectRefused(first.body.token);
  });

  it('refuses a code redeemed for another app, and the code is used up', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await exchange(code, pkce.verifier, { client_id: otherApp.client_key }));
    await expectUsedUp(code, pkce.verifier);
  });

  it('refuses a code redeemed with another redirect_uri, and the code is used up', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await exchange(code, pkce.verifier, { redirect_uri: OTHER_REDIRECT }));
    await expectUsedUp(code, pkce.verifier);
  });

  it('answers invalid_client for a client_id that names no app (RFC 6749 §5.2), and the code is used up', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await exchange(code, pkce.verifier, { client_id: 'ck_nosuchappnosuchappnosuch' }), 'invalid_client');
    await expectUsedUp(code, pkce.verifier);
  });

  it('refuses client authentication a public client cannot have: Basic is a 401 with a Basic challenge, a secret in the body a 400', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const fields = { grant_type: 'authorization_code', client_id: app.client_key, code, redirect_uri: REDIRECT, code_verifier: pkce.verifier };
    const basic = await fetch(`${h.loginUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.client_key}:made-up`).toString('base64')}` },
      body: new URLSearchParams(fields),
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe(`Basic realm="${h.loginUrl}"`);
    expect(await basic.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    await expectUsedUp(code, pkce.verifier);

    const again = await h.code(app.client_key, REDIRECT, session.cookie);
    expectNothingIssued(await exchange(again.code, again.pkce.verifier, { client_secret: 'made-up' }), 'invalid_client');
    await expectUsedUp(again.code, again.pkce.verifier);
  });

  it('revokes what a code issued when it is presented again, however the request is wrong (RFC 6749 §4.1.2)', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const first = await h.jsonToken({ code, code_verifier: pkce.verifier });
    expect(first.status).toBe(200);
    expectNothingIssued(await h.jsonToken({ code }), 'invalid_request');
    await expectRefused(first.body.token);
  });

  it('refuses an expired code', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const row = await codeRow(code);
    // 60 s after issue, as the clock would have it.
    await h.db.update(authorizationCodes).set({ expiresAt: new Date(Date.now() - 1) }).where(eq(authorizationCodes.codeHash, row.codeHash));
    expectNothingIssued(await exchange(code, pkce.verifier));
  });

  it('refuses a grant type other than authorization_code', async () => {
    expectNothingIssued(await h.formToken({ grant_type: 'password', username: user.email, password: 'x' }), 'unsupported_grant_type');
  });
});

/** What a conforming app sends to /authorize; an override of undefined leaves that parameter out. */
const authorizeQuery = (overrides: Record<string, string | undefined>) =>
  Object.fromEntries(
    Object.entries({ client_id: app.client_key, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256', ...overrides }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );

describe('/authorize', () => {
  const authorize = (overrides: Record<string, string | undefined>, cookie = session.cookie) => h.authorize(authorizeQuery(overrides), cookie);

  const expectErrorPage = (res: { status: number; location: string | null; body: string; headers: Headers }) => {
    expect(res.status).toBe(400);
    expect(res.location).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    // The hosted pages' headers: not framed, not sniffed, no script.
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.body).not.toContain('code=');
  };

  it('shows an error page, never a redirect, for an unknown app', async () => {
    expectErrorPage(await authorize({ client_id: 'ck_unknownunknownunknown' }));
  });

  it('shows an error page for a redirect_uri not registered', async () => {
    expectErrorPage(await authorize({ redirect_uri: 'https://evil.example.test/callback' }));
  });

  it('shows an error page for a redirect_uri of another app', async () => {
    expectErrorPage(await h.authorize({ client_id: otherApp.client_key, redirect_uri: OTHER_REDIRECT, code_challenge: newPkce().challenge, code_challenge_method: 'S256' }, session.cookie));
  });

  it.each([
    ['a trailing slash', `${REDIRECT}/`],
    ['case', REDIRECT.replace('callback', 'Callback')],
    ['case of the host', REDIRECT.replace('app.example', 'APP.example')],
    ['port', 'https://app.example.test:8443/callback'],
    ['an added query', `${REDIRECT}?next=/admin`],
    ['a dropped query', 'http://127.0.0.1:5173/cb'],
    ['a fragment', `${REDIRECT}#frag`],
    ['a prefix match', `${REDIRECT}/../evil`],
  ])('shows an error page for a redirect_uri differing by %s', async (_what, redirectUri) => {
    expectErrorPage(await authorize({ redirect_uri: redirectUri }));
  });

  it('answers invalid_request to the redirect_uri for code_challenge_method=plain, with no code', async () => {
    const res = await authorize({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    expect(res.status).toBe(302);
    const params = new URL(res.location!).searchParams;
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('iss')).toBe(h.loginUrl);
    expect(params.get('code')).toBeNull();
  });

  it('answers invalid_request for a missing code_challenge, with no code', async () => {
    const res = await authorize({ code_challenge: undefined, code_challenge_method: undefined });
    expect(res.status).toBe(302);
    const params = new URL(res.location!).searchParams;
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('s');
    expect(params.get('code')).toBeNull();
  });

  it('answers invalid_request for an oversized nonce, with no code', async () => {
    const res = await authorize({ nonce: 'n'.repeat(513) });
    const params = new URL(res.location!).searchParams;
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('code')).toBeNull();
  });

  it('does not use a session of another app: sends the browser to sign in', async () => {
    const res = await authorize({ client_id: otherApp.client_key });
    expect(res.status).toBe(302);
    expect(new URL(res.location!).pathname).toBe('/sign-in');
  });

  it('refuses what it does not support to the redirect_uri, with state and iss and no code', async () => {
    const cases: Array<[Record<string, string | undefined>, string]> = [
      [{ response_type: undefined }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: 'code id_token' }, 'unsupported_response_type'],
      [{ scope: undefined }, 'invalid_scope'],
      [{ scope: 'profile' }, 'invalid_scope'],
      [{ scope: 'openidx email' }, 'invalid_scope'],
      [{ response_mode: 'fragment' }, 'invalid_request'],
      [{ response_mode: 'form_post' }, 'invalid_request'],
      [{ request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' }, 'request_not_supported'],
      [{ request_uri: 'https://evil.example.test/request.jwt' }, 'request_uri_not_supported'],
    ];
    for (const [params, error] of cases) {
      const res = await authorize(params);
      expect([params, res.status]).toEqual([params, 302]);
      const location = new URL(res.location!);
      expect([params, `${location.origin}${location.pathname}`]).toEqual([params, REDIRECT]);
      expect([params, Object.fromEntries(location.searchParams)]).toEqual([params, { error, error_description: expect.any(String), state: 's', iss: h.loginUrl }]);
    }
  });

  it('issues a code for openid among other scope values, response_mode=query, and a claims request it ignores', async () => {
    for (const params of [{ scope: 'email openid' }, { response_mode: 'query' }, { claims: '{"id_token":{"acr":{"essential":true}}}' }]) {
      const res = await authorize(params);
      expect([params, new URL(res.location!).searchParams.get('code')]).toEqual([params, expect.any(String)]);
    }
  });

  it('sets nothing from a forged cookie: sends the browser to sign in', async () => {
    const res = await authorize({}, `${session.cookie.split('=')[0]}=${session.sid}`);
    expect(new URL(res.location!).pathname).toBe('/sign-in');
  });
});

describe('prompt, max_age and auth_time (OIDC Core 3.1.2.1)', () => {
  const authorize = (overrides: Record<string, string>, cookie: string) => h.authorize(authorizeQuery(overrides), cookie);
  const answered = (res: { location: string | null }) => new URL(res.location!);

  /** A live session whose sign-in happened `secondsAgo`. */
  async function signedInAgo(secondsAgo: number) {
    const s = await h.signIn(user, app, org.organization_uuid);
    const at = new Date(Date.now() - secondsAgo * 1000);
    await h.db.update(loginSessions).set({ createdAt: at }).where(eq(loginSessions.sid, s.sid));
    return { ...s, at };
  }

  it('the ID token carries auth_time, the time of the sign-in behind the session', async () => {
    const s = await signedInAgo(300);
    const { code, pkce } = await h.code(app.client_key, REDIRECT, s.cookie);
    const res = await exchange(code, pkce.verifier);
    expect(decodeJwt(res.body.id_token).auth_time).toBe(Math.floor(s.at.getTime() / 1000));
  });

  it('prompt=login sends a signed-in browser to sign in again, and issues no code', async () => {
    const res = await authorize({ prompt: 'login' }, session.cookie);
    expect(answered(res).pathname).toBe('/sign-in');
    expect(answered(res).searchParams.get('code')).toBeNull();
  });

  it('max_age: a sign-in older than it is asked for again (login_required with prompt=none); a younger one gets a code', async () => {
    const s = await signedInAgo(120);
    expect(answered(await authorize({ max_age: '60' }, s.cookie)).pathname).toBe('/sign-in');
    expect(answered(await authorize({ max_age: '0' }, s.cookie)).pathname).toBe('/sign-in');
    expect(answered(await authorize({ max_age: '60', prompt: 'none' }, s.cookie)).searchParams.get('error')).toBe('login_required');
    expect(answered(await authorize({ max_age: '600', prompt: 'none' }, s.cookie)).searchParams.get('code')).toBeTruthy();
  });

  it('refuses what it cannot do: consent, select_account, none with another value, an unknown value, a max_age that is no number', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ prompt: 'consent' }, 'consent_required'],
      [{ prompt: 'select_account' }, 'account_selection_required'],
      [{ prompt: 'none login' }, 'invalid_request'],
      [{ prompt: 'sudo' }, 'invalid_request'],
      [{ max_age: '-1' }, 'invalid_request'],
      [{ max_age: 'soon' }, 'invalid_request'],
    ];
    for (const [params, error] of cases) {
      const location = answered(await authorize(params, session.cookie));
      expect([params, location.searchParams.get('error')]).toEqual([params, error]);
      expect(location.searchParams.get('code')).toBeNull();
    }
  });
});

describe('end-user tokens on the API', () => {
  it('refuses alg none', async () => {
    const claims = decodeJwt(await validToken());
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    await expectRefused(`${header}.${base64url.encode(JSON.stringify(claims))}.`);
  });

  it('refuses HS256 keyed with our public key', async () => {
    const claims = decodeJwt(await validToken());
    const jwks = (await (await fetch(`${h.loginUrl}/jwks`)).json()) as any;
    const pem = createPublicKey({ key: jwks.keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: jwks.keys[0].kid })
      .sign(new TextEncoder().encode(String(pem)));
    await expectRefused(token);
  });

  it('refuses a token signed by a key we do not know (unknown kid)', async () => {
    const claims = decodeJwt(await validToken());
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    expect((await exportJWK(publicKey)).kty).toBe('RSA');
    await expectRefused(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'someone-elses' }).sign(privateKey));
  });

  it('refuses a token claiming our kid but signed by another key', async () => {
    const claims = decodeJwt(await validToken());
    const { kid } = await h.identity.keys.signingKey();
    const { privateKey } = await generateKeyPair('RS256');
    await expectRefused(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey));
  });

  it('refuses a wrong iss', async () => {
    await expectRefused(await forged({ iss: 'https://login.evil.test' }));
  });

  it('refuses an aud that is not a provisioned app', async () => {
    await expectRefused(await forged({ aud: 'ck_notanappnotanappnota' }));
  });

  it("refuses an aud of another app than the session's", async () => {
    await expectRefused(await forged({ aud: otherApp.client_key }));
  });

  it('refuses an expired token', async () => {
    await expectRefused(await forged({ exp: Math.floor(Date.now() / 1000) - 120 }));
  });

  it('answers a refused token with error="invalid_token" in its challenge, and a request without one with none (RFC 6750 §3.1)', async () => {
    const challenge = async (authorization?: string) => {
      const res = await fetch(`${h.apiUrl}/api/auth/me`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      return res.headers.get('www-authenticate');
    };
    const expired = await forged({ exp: Math.floor(Date.now() / 1000) - 120 });
    expect(await challenge(`Bearer ${expired}`)).toMatch(/^Bearer error="invalid_token", error_description="end-user token rejected: [^"]+"$/);
    expect(await challenge('Bearer wes_neverIssued')).toBe('Bearer error="invalid_token", error_description="unknown or revoked token"');
    expect(await challenge(undefined)).toBe('Bearer');
    expect(await challenge('Basic dXNlcjpwYXNz')).toBe('Bearer');
  });

  it('refuses an ID token used as an access token', async () => {
    const { code, pkce } = await h.code(app.client_key, REDIRECT, session.cookie);
    const res = await exchange(code, pkce.verifier);
    await expectRefused(res.body.id_token);
  });

  it('refuses the tokens of a revoked session, and prompt=none then answers login_required', async () => {
    const own = await h.signIn(user, app, org.organization_uuid);
    const { code, pkce } = await h.code(app.client_key, REDIRECT, own.cookie);
    const token = (await exchange(code, pkce.verifier)).body.access_token;
    expect((await h.api('/api/auth/me', token)).status).toBe(200);
    await revokeLoginSession(h.db, { organization_uuid: org.organization_uuid, sid: own.sid });
    await expectRefused(token);
    const silent = await h.authorize(authorizeQuery({ state: 'q', prompt: 'none' }), own.cookie);
    expect(new URL(silent.location!).searchParams.get('error')).toBe('login_required');
  });

  it("closes an open stream with a revoked event once the token's session is revoked", async () => {
    const own = await h.signIn(user, app, org.organization_uuid);
    const { code, pkce } = await h.code(app.client_key, REDIRECT, own.cookie);
    const token = (await exchange(code, pkce.verifier)).body.access_token;
    const workflowId = `wf-${randomUUID()}`;
    const now = new Date();
    await h.db.insert(runs).values({
      workflowId,
      organizationUuid: org.organization_uuid,
      workflowType: 'identity.end-user.session.revoke',
      version: '1.0',
      stateName: 'pending',
      status: 'RUNNING',
      endUserUuid: user.end_user_uuid,
      clientUuid: app.client_uuid,
      createdAt: now,
      updatedAt: now,
    });
    const res = await fetch(`${h.apiUrl}/api/workflows/${workflowId}/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    await revokeLoginSession(h.db, { organization_uuid: org.organization_uuid, sid: own.sid });
    const body = await Promise.race([res.text(), new Promise<string>((_, reject) => setTimeout(() => reject(new Error('stream stayed open')), 15_000))]);
    expect(body).toMatch(/^event: ?revoked$/m);
  });

  it('keeps verifying tokens signed before a key rotation, and signs new ones with the new key', async () => {
    const before = await validToken();
    const kid = await h.identity.keys.rotate();
    expect((await h.api('/api/auth/me', before)).status).toBe(200);
    const after = await validToken();
    expect(JSON.parse(Buffer.from(after.split('.')[0], 'base64url').toString()).kid).toBe(kid);
    const jwks = (await (await fetch(`${h.loginUrl}/jwks`)).json()) as any;
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([kid, JSON.parse(Buffer.from(before.split('.')[0], 'base64url').toString()).kid]));
  });
});

describe('what an end-user token may do', () => {
  it('cannot start a workflow type not exposed to end users (403 not_exposed_to_end_users)', async () => {
    const res = await h.api('/api/workflows/start', await validToken(), {
      body: { workflow_type: 'identity.app.provision', initial_data: { name: 'x', redirect_uris: [REDIRECT] } },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('not_exposed_to_end_users');
  });

  it("cannot read another end user's run: 404 on get, history and retry, absent from the list", async () => {
    const other = await h.createEndUser(app, org.organization_uuid);
    const workflowId = `wf-${randomUUID()}`;
    const now = new Date();
    await h.db.insert(runs).values({
      workflowId,
      organizationUuid: org.organization_uuid,
      workflowType: 'identity.end-user.session.revoke',
      version: '1.0',
      stateName: 'completed',
      isTerminal: true,
      status: 'COMPLETED',
      endUserUuid: other.end_user_uuid,
      clientUuid: app.client_uuid,
      createdAt: now,
      updatedAt: now,
    });
    const token = await validToken();
    for (const path of [`/api/workflows/${workflowId}`, `/api/workflows/${workflowId}/history`, `/api/workflows/${workflowId}/stream`]) {
      expect((await h.api(path, token)).status).toBe(404);
    }
    expect((await h.api(`/api/workflows/${workflowId}/retry`, token, { method: 'POST' })).status).toBe(404);
    const list = await h.api('/api/workflows?limit=100', token);
    expect(list.status).toBe(200);
    expect(list.body.runs.map((r: { workflow_id: string }) => r.workflow_id)).not.toContain(workflowId);
    // The organization's members still see it.
    expect((await h.api(`/api/workflows/${workflowId}`, org.token)).status).toBe(200);
  });

  it('reads its own run', async () => {
    const workflowId = `wf-${randomUUID()}`;
    const now = new Date();
    await h.db.insert(runs).values({
      workflowId,
      organizationUuid: org.organization_uuid,
      workflowType: 'identity.end-user.session.revoke',
      version: '1.0',
      stateName: 'completed',
      isTerminal: true,
      status: 'COMPLETED',
      endUserUuid: user.end_user_uuid,
      clientUuid: app.client_uuid,
      createdAt: now,
      updatedAt: now,
    });
    const token = await validToken();
    expect((await h.api(`/api/workflows/${workflowId}`, token)).status).toBe(200);
    const list = await h.api('/api/workflows?limit=100', token);
    expect(list.body.runs.map((r: { workflow_id: string }) => r.workflow_id)).toContain(workflowId);
  });

  it.each([
    ['list connections', 'GET', '/api/connections'],
    ['create a connection', 'POST', '/api/connections'],
    ['list plugins', 'GET', '/api/plugins'],
    ['list apps', 'GET', '/api/apps'],
    ['list schedules', 'GET', '/api/schedules'],
    ['decode payloads', 'POST', '/api/temporal-codec/decode'],
  ])('cannot %s (403)', async (_what, method, path) => {
    const res = await h.api(path, await validToken(), { method, body: method === 'POST' ? { payloads: [] } : undefined });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('end_user_forbidden');
  });

  it('sees only the types exposed to end users in the catalog', async () => {
    const token = await validToken();
    const list = await h.api('/api/workflows/types', token);
    expect(list.status).toBe(200);
    expect(list.body.types.map((t: { workflow_type: string }) => t.workflow_type)).toEqual(['identity.end-user.session.revoke']);
    expect((await h.api('/api/workflows/types/identity.app.provision', token)).status).toBe(404);
    const members = await h.api('/api/workflows/types', org.token);
    expect(members.body.types.length).toBeGreaterThan(1);
  });
});
