import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { api, stackEnv, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';
import {
  authorizeParams,
  Browser,
  closeBrowsers,
  loginUrl,
  type ProvisionedApp,
  provisionApp,
  signInPath,
  uniqueEmail,
  verifiedAccount as verifiedAccountOf,
  waitForLink,
} from '../support/accounts';

/**
 * End-user sign-in on the real stack: an ordinary OIDC client library (oauth4webapi, unchanged)
 * through discovery, the hosted sign-in form and the PKCE code flow, then the run API with the
 * resulting token.
 */
const PASSWORD = 'a long enough passphrase';
let app: ProvisionedApp;

beforeAll(async () => {
  app = await provisionApp('Sign-in interop app');
});
afterAll(closeBrowsers);

async function verifiedAccount(email = uniqueEmail('interop')) {
  const created = await api('/api/auth/end-user/register', { token: null, body: { client_key: app.client_key, email, password: PASSWORD } });
  expect(created.status).toBe(201);
  const link = await waitForLink(email, '/verify-email');
  expect((await api('/api/auth/end-user/verify-email', { token: null, body: { token: link.searchParams.get('token') } })).status).toBe(200);
  return { email, end_user_uuid: created.body.end_user_uuid as string };
}

/** The whole code flow as a browser app does it, with oauth4webapi doing the OIDC parts. */
async function signInWithOauth4webapi(email: string, browser = new Browser()) {
  const oauth = await import('oauth4webapi');
  const insecure = { [oauth.allowInsecureRequests]: true };
  const issuer = new URL(loginUrl());
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
  const client = { client_id: app.client_key };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const authorize = new URL(as.authorization_endpoint!);
  authorize.search = new URLSearchParams({
    client_id: app.client_key,
    redirect_uri: app.redirect_uri,
    response_type: 'code',
    scope: 'openid email',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();

  const toSignIn = await browser.get(authorize.toString());
  expect(toSignIn.status).toBe(302);
  const form = await browser.get(toSignIn.location!);
  expect(form.status).toBe(200);
  const signedIn = await browser.submit(form.body, '/sign-in', { email, password: PASSWORD });
  expect(signedIn.status).toBe(302);
  const back = await browser.get(signedIn.location!);
  expect(back.status).toBe(302);
  const callback = new URL(back.location!);
  expect(`${callback.origin}${callback.pathname}`).toBe(app.redirect_uri);

  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, app.redirect_uri, verifier, insecure);
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
  await oauth.validateApplicationLevelSignature(as, response, insecure);
  return { result, claims: oauth.getValidatedIdTokenClaims(result)!, browser };
}

describe('an OIDC client library against the login host', () => {
  it('does discovery, the PKCE code flow through the hosted sign-in form, and validates the ID token (signature included)', async () => {
    const user = await verifiedAccount();
    const { result, claims } = await signInWithOauth4webapi(user.email);
    expect(result.token_type.toLowerCase()).toBe('bearer');
    expect(claims).toMatchObject({ iss: loginUrl(), sub: user.end_user_uuid, aud: app.client_key, email: user.email, email_verified: true });
    const me = await api('/api/auth/me', { token: result.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      token_type: 'end_user',
      principal_type: 'end_user',
      user_id: user.end_user_uuid,
      organization_uuid: stackEnv.orgA,
      username: user.email,
    });
  });
});

describe('login sessions of several apps in one browser', () => {
  it('keeps each app its own: signed in to A, then to B, prompt=none for A still issues a code', async () => {
    const other = await provisionApp('Sign-in second app');
    const browser = new Browser();
    for (const each of [app, other]) {
      const email = await verifiedAccountOf(each, PASSWORD, uniqueEmail('two-apps'));
      const form = await browser.get(signInPath(authorizeParams(each).query));
      expect((await browser.submit(form.body, '/sign-in', { email, password: PASSWORD })).status).toBe(302);
    }
    for (const each of [app, other]) {
      const silent = await browser.get(`/authorize?${new URLSearchParams({ ...authorizeParams(each).query, prompt: 'none' })}`);
      expect(silent.status).toBe(302);
      const callback = new URL(silent.location!);
      expect(callback.origin + callback.pathname).toBe(each.redirect_uri);
      expect(callback.searchParams.get('code')).toBeTruthy();
    }
  });
});

describe('an end user on the run API', () => {
  it("starts an exposed type with its identity pinned, reads only its own runs, and signs out a session", async () => {
    const user = await verifiedAccount();
    const other = await verifiedAccount();
    const first = await signInWithOauth4webapi(user.email);
    const second = await signInWithOauth4webapi(user.email);
    const otherToken = (await signInWithOauth4webapi(other.email)).result.access_token;
    const token = first.result.access_token;
    const secondSid = decodeJwt(second.result.access_token).sid as string;

    const catalog = await api('/api/workflows/types', { token });
    // Other suites' compositions in this organization may be exposed to end users too: the built-in types are what is fixed.
    const builtIn = catalog.body.types.map((t: { workflow_type: string }) => t.workflow_type).filter((t: string) => !t.startsWith('virtual.'));
    expect(builtIn).toEqual(['identity.end-user.session.revoke']);

    // Naming another user is overridden by the engine: the run can only touch the caller's own sessions.
    const started = await api('/api/workflows/start', {
      token,
      body: { workflow_type: 'identity.end-user.session.revoke', initial_data: { sid: secondSid, end_user_uuid: other.end_user_uuid } },
    });
    expect(started.status).toBe(201);
    const run = await waitForTerminal(started.body.workflow_id, token);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toMatchObject({ sid: secondSid, end_user_uuid: user.end_user_uuid, client_uuid: app.client_uuid, revoked_sessions: 1 });

    expect((await api('/api/auth/me', { token: second.result.access_token })).status).toBe(401);
    expect((await api('/api/auth/me', { token })).status).toBe(200);

    const id = started.body.workflow_id;
    expect((await api(`/api/workflows/${id}`, { token: otherToken })).status).toBe(404);
    expect((await api(`/api/workflows/${id}/history`, { token: otherToken })).status).toBe(404);
    const theirs = await api('/api/workflows?limit=100', { token: otherToken });
    expect(theirs.body.runs.map((r: { workflow_id: string }) => r.workflow_id)).not.toContain(id);
    const mine = await api('/api/workflows?limit=100', { token });
    expect(mine.body.runs.map((r: { workflow_id: string }) => r.workflow_id)).toEqual([id]);
    expect((await api(`/api/workflows/${id}`)).status).toBe(200);

    // A session of another user is not found for this one.
    const foreign = await api('/api/workflows/start', {
      token: otherToken,
      body: { workflow_type: 'identity.end-user.session.revoke', initial_data: { sid: decodeJwt(token).sid } },
    });
    const refused = await waitForTerminal(foreign.body.workflow_id, otherToken);
    expect(refused.status).toBe('FAILED');
    expect(refused.state_data.failure_type).toBe('not_found');
    expect((await api('/api/auth/me', { token })).status).toBe(200);

    // Sign out everywhere: the token that asked for it is refused from then on.
    const everywhere = await api('/api/workflows/start', { token, body: { workflow_type: 'identity.end-user.session.revoke', initial_data: { all: true } } });
    expect(everywhere.status).toBe(201);
    const done = await waitForTerminal(everywhere.body.workflow_id);
    expect(done.status).toBe('COMPLETED');
    expect((await api('/api/auth/me', { token })).status).toBe(401);
  });

  it("answers the token exchange's refusals in RFC 6749's shape, a body that is not JSON included", async () => {
    const exchange = (body: string) =>
      fetch(`${stackEnv.apiUrl}/api/auth/end-user/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [body, error] of [
      ['"AAA"', 'invalid_request'],
      ['{"code": ""}', 'invalid_request'],
      [JSON.stringify({ code: 'never-issued', code_verifier: 'v'.repeat(43) }), 'invalid_grant'],
    ]) {
      const res = await exchange(body);
      expect([body, res.status, res.headers.get('cache-control')]).toEqual([body, 400, 'no-store']);
      expect(await res.json()).toEqual({ error, error_description: expect.any(String) });
    }
  });

  it('lists the organization its apps (org members only)', async () => {
    const res = await api('/api/apps');
    expect(res.status).toBe(200);
    expect(res.body.apps).toEqual(expect.arrayContaining([expect.objectContaining({ client_key: app.client_key, redirect_uris: [app.redirect_uri] })]));
    const other = await api('/api/apps', { token: stackEnv.tokenB });
    expect(other.body.apps.map((a: { client_key: string }) => a.client_key)).not.toContain(app.client_key);
  });

  it('provisions with the integration details and refuses unsafe redirect URIs', async () => {
    const run = await waitForTerminal(
      (await api('/api/workflows/start', { body: { workflow_type: 'identity.app.provision', initial_data: { name: 'Docs', redirect_uris: ['https://docs.example.test/cb'] } } })).body.workflow_id,
    );
    expect(run.state_data.integration).toMatchObject({
      issuer: loginUrl(),
      discovery_url: `${loginUrl()}/.well-known/openid-configuration`,
      authorize_url: `${loginUrl()}/authorize`,
      token_url: `${loginUrl()}/token`,
      jwks_url: `${loginUrl()}/jwks`,
      flow: 'authorization_code_pkce',
      sdk: { package: '@workflow-engine/browser-auth', install: expect.any(String), snippet: expect.stringContaining(run.state_data.client_key) },
    });
    expect(run.state_data.integration.sdk.snippet).toContain(`identityApi: '${stackEnv.apiUrl}'`);
    for (const bad of ['http://app.example.test/cb', 'https://app.example.test/cb#x', 'javascript:alert(1)']) {
      const res = await api('/api/workflows/start', { body: { workflow_type: 'identity.app.provision', initial_data: { name: 'Bad', redirect_uris: [bad] } } });
      expect(res.status).toBe(422);
      expect(res.body.error.details[0].field).toBe('initial_data.redirect_uris.0');
    }
  });

  it("configure-client changes the app's redirect URIs at once, and fails as not_found for another organization", async () => {
    const added = 'https://added.example.test/cb';
    const run = await waitForTerminal(
      (await api('/api/workflows/start', { body: { workflow_type: 'identity.app.configure-client', initial_data: { client_key: app.client_key, add_redirect_uris: [added] } } })).body.workflow_id,
    );
    expect(run.state_data.redirect_uris).toEqual([app.redirect_uri, added]);
    const authorize = await fetch(`${loginUrl()}/authorize?${new URLSearchParams({ client_id: app.client_key, redirect_uri: added, response_type: 'code', scope: 'openid', prompt: 'none', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    expect(new URL(authorize.headers.get('location')!).searchParams.get('error')).toBe('login_required');

    const foreign = await waitForTerminal(
      (await api('/api/workflows/start', { token: stackEnv.tokenB, body: { workflow_type: 'identity.app.configure-client', initial_data: { client_key: app.client_key, add_redirect_uris: ['https://evil.example.test/cb'] } } })).body.workflow_id,
      stackEnv.tokenB,
    );
    expect(foreign.status).toBe('FAILED');
    expect(foreign.state_data.failure_type).toBe('not_found');
  });
});

describe('signing key rotation', () => {
  /** The CLI as an operator runs it, against the stack's database (through the API's admin socket on PGlite). */
  const cli = (...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY };
    if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
    else env.DATA_DIR = path.join(process.env.TEST_WORK_DIR!, 'data');
    return execFileSync(process.execPath, ['dist/src/cli.js', ...args], { env, encoding: 'utf8' });
  };

  it('npm run cli -- keys rotate: new tokens are signed with the new key; tokens signed before verify until they expire', async () => {
    const user = await verifiedAccount();
    const before = (await signInWithOauth4webapi(user.email)).result.access_token;
    const oldKid = decodeProtectedHeader(before).kid;
    const { kid } = JSON.parse(cli('keys', 'rotate', '--json'));
    expect(kid).toEqual(expect.any(String));
    expect(kid).not.toBe(oldKid);
    // Another API process re-reads the keys within 30 s; on PGlite the CLI went through this one.
    const kids = await waitFor('the new key in the JWKS', async () => {
      const jwks = (await (await fetch(`${loginUrl()}/jwks`)).json()) as { keys: Array<{ kid: string }> };
      const all = jwks.keys.map((k) => k.kid);
      return all.includes(kid) ? all : undefined;
    }, 40_000, 500);
    expect(kids).toContain(oldKid);
    expect((await api('/api/auth/me', { token: before })).status).toBe(200);
    const after = (await signInWithOauth4webapi(user.email)).result.access_token;
    expect(decodeProtectedHeader(after).kid).toBe(kid);
    expect((await api('/api/auth/me', { token: after })).status).toBe(200);
  });
});
