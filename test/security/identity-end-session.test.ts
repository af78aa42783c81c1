import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { Browser, closeBrowsers, hiddenFields } from '../support/accounts';
import { IdentityHarness, newPkce } from '../support/identity-harness';

/**
 * OIDC RP-Initiated Logout on the login host (src/identity/end-session.controller.ts), on the real
 * API and login host (IdentityHarness): the session ends at once for every token bound to it, the
 * app's cookie goes, the browser returns only to a registered URI, and a request nothing vouches
 * for ends nothing without the user's confirmation.
 */
const REDIRECT = 'https://app.example.test/callback';
let h: IdentityHarness;
let org: Awaited<ReturnType<IdentityHarness['createOrg']>>;
let app: Awaited<ReturnType<IdentityHarness['provisionApp']>>;
let otherApp: Awaited<ReturnType<IdentityHarness['provisionApp']>>;

beforeAll(async () => {
  h = await IdentityHarness.start();
  org = await h.createOrg();
  app = await h.provisionApp(org.organization_uuid, [REDIRECT, 'https://app.example.test/'], 'Signed app');
  otherApp = await h.provisionApp(org.organization_uuid, ['https://other.example.test/cb'], 'Other app');
});

afterAll(async () => {
  await closeBrowsers();
  await h?.stop();
});

/** A user signed in to `of` in a browser of its own, with the tokens a code exchange gave that browser's session. */
async function signedIn(of = app) {
  const user = await h.createEndUser(of, org.organization_uuid);
  const { cookie, sid } = await h.signIn(user, of, org.organization_uuid);
  const browser = new Browser();
  const [name, value] = cookie.split('=');
  browser.cookies.set(name, value);
  const { code, pkce } = await h.code(of.client_key, of.redirect_uris[0], cookie);
  const tokens = await h.formToken({ grant_type: 'authorization_code', client_id: of.client_key, code, redirect_uri: of.redirect_uris[0], code_verifier: pkce.verifier });
  expect(tokens.status).toBe(200);
  return { user, sid, cookieName: name, browser, access: tokens.body.access_token as string, idToken: tokens.body.id_token as string };
}

const endSession = (browser: Browser, params: Record<string, string>) => browser.get(`${h.loginUrl}/end-session?${new URLSearchParams(params)}`);
const me = async (token: string) => (await h.api('/api/auth/me', token)).status;

/** What the browser's cookie gets from /authorize: a code (its session is live) or the sign-in page. */
async function authorizeWith(browser: Browser, of = app) {
  const res = await browser.get(
    `${h.loginUrl}/authorize?${new URLSearchParams({ client_id: of.client_key, redirect_uri: of.redirect_uris[0], response_type: 'code', scope: 'openid', state: 's', code_challenge: newPkce().challenge, code_challenge_method: 'S256' })}`,
  );
  return new URL(res.location!).pathname === '/sign-in' ? 'sign-in page' : new URL(res.location!).searchParams.has('code') ? 'code' : res.location;
}

describe('the end-session endpoint', () => {
  it('is advertised in discovery', async () => {
    const discovery = (await (await fetch(`${h.loginUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.end_session_endpoint).toBe(`${h.loginUrl}/end-session`);
  });

  it("with the ID token as hint: revokes the session at once (its access tokens refused), clears the app's cookie, returns to the registered URI with state", async () => {
    const s = await signedIn();
    expect(decodeJwt(s.idToken).sid).toBe(s.sid);
    expect(await me(s.access)).toBe(200);
    const oldCookie = s.browser.cookies.get(s.cookieName)!;
    const res = await endSession(s.browser, { id_token_hint: s.idToken, client_id: app.client_key, post_logout_redirect_uri: REDIRECT, state: 'st-1' });
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${REDIRECT}?state=st-1`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.getSetCookie()).toEqual([expect.stringMatching(new RegExp(`^${s.cookieName}=; .*Expires=Thu, 01 Jan 1970`, 'i'))]);
    // Synchronously: the very next request with the session's token is refused.
    expect(await me(s.access)).toBe(401);
    expect(s.browser.cookies.has(s.cookieName)).toBe(false);
    // Even a browser that kept the old cookie gets no code from it.
    const stale = new Browser();
    stale.cookies.set(s.cookieName, oldCookie);
    expect(await authorizeWith(stale)).toBe('sign-in page');
  });

  it('accepts an expired ID token as hint (signature and issuer still checked)', async () => {
    const s = await signedIn();
    const { kid, key } = await h.identity.keys.signingKey();
    const claims = decodeJwt(s.idToken);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 }).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key);
    const res = await endSession(s.browser, { id_token_hint: expired, post_logout_redirect_uri: REDIRECT });
    expect(res.status).toBe(302);
    expect(res.location).toBe(REDIRECT);
    expect(await me(s.access)).toBe(401);
    expect(await authorizeWith(s.browser)).toBe('sign-in page');
  });

  it("ends the hint's session from a browser without its cookie, and shows a signed-out page without post_logout_redirect_uri", async () => {
    const s = await signedIn();
    const elsewhere = new Browser();
    const res = await endSession(elsewhere, { id_token_hint: s.idToken });
    expect(res.status).toBe(200);
    expect(res.body).toContain('You are signed out of Signed app.');
    expect(await me(s.access)).toBe(401);
    expect(await authorizeWith(s.browser)).toBe('sign-in page');
  });

  it('takes the same parameters as a form POST', async () => {
    const s = await signedIn();
    const res = await s.browser.request(`${h.loginUrl}/end-session`, { form: { id_token_hint: s.idToken, post_logout_redirect_uri: REDIRECT, state: 'p' } });
    expect(res.status).toBe(302);
    expect(res.location).toBe(`${REDIRECT}?state=p`);
    expect(await me(s.access)).toBe(401);
  });

  it('without a hint asks the user first (CSRF-protected form); the confirmed form ends the session and returns with state', async () => {
    const s = await signedIn();
    const asked = await endSession(s.browser, { client_id: app.client_key, post_logout_redirect_uri: REDIRECT, state: 'st-2' });
    expect(asked.status).toBe(200);
    expect(asked.body).toContain(`You are signed in to Signed app as ${s.user.email}.`);
    expect(await me(s.access)).toBe(200);

    const fields = hiddenFields(asked.body, '/end-session/confirm');
    expect(fields).toEqual({ csrf_token: expect.any(String), client_id: app.client_key, post_logout_redirect_uri: REDIRECT, state: 'st-2' });
    const { csrf_token: _dropped, ...forged } = fields;
    const refused = await s.browser.request(`${h.loginUrl}/end-session/confirm`, { form: forged });
    expect(refused.status).toBe(403);
    expect(await me(s.access)).toBe(200);

    const confirmed = await s.browser.request(`${h.loginUrl}/end-session/confirm`, { form: fields });
    expect(confirmed.status).toBe(302);
    expect(confirmed.location).toBe(`${REDIRECT}?state=st-2`);
    expect(await me(s.access)).toBe(401);
  });

  it("with another user's hint: ends that user's session and asks before ending the one in this browser", async () => {
    const victim = await signedIn();
    const attacker = await signedIn();
    const res = await endSession(victim.browser, { id_token_hint: attacker.idToken, post_logout_redirect_uri: REDIRECT });
    expect(res.status).toBe(200);
    expect(res.body).toContain(`as ${victim.user.email}`);
    expect(await me(victim.access)).toBe(200);
    expect(await me(attacker.access)).toBe(401);
  });

  it('a hint signed by a key no longer in the JWKS cannot vouch: the user is asked', async () => {
    const s = await signedIn();
    const { privateKey } = await generateKeyPair('RS256');
    const unknownKid = await new SignJWT(decodeJwt(s.idToken)).setProtectedHeader({ alg: 'RS256', kid: 'retired-key' }).sign(privateKey);
    const res = await endSession(s.browser, { id_token_hint: unknownKid, client_id: app.client_key });
    expect(res.status).toBe(200);
    expect(res.body).toContain('/end-session/confirm');
    expect(await me(s.access)).toBe(200);
  });

  describe('refuses with 400 naming the parameter and its rule, ending nothing and redirecting nowhere', () => {
    it.each<[string, (s: Awaited<ReturnType<typeof signedIn>>, forged: Record<string, string>) => Record<string, string>, string]>([
      ['an unregistered post_logout_redirect_uri', (s) => ({ id_token_hint: s.idToken, post_logout_redirect_uri: 'https://evil.example.test/' }), 'post_logout_redirect_uri must be exactly one of the redirect URIs registered for Signed app'],
      ['a post_logout_redirect_uri differing by a trailing slash', (s) => ({ id_token_hint: s.idToken, post_logout_redirect_uri: `${REDIRECT}/` }), 'post_logout_redirect_uri must be exactly one'],
      ["another app's redirect URI", (s) => ({ id_token_hint: s.idToken, post_logout_redirect_uri: 'https://other.example.test/cb' }), 'post_logout_redirect_uri must be exactly one'],
      ['a hint of another app than client_id', (s) => ({ id_token_hint: s.idToken, client_id: otherApp.client_key }), 'id_token_hint must be issued to the app client_id names'],
      ['a forged signature under our kid', (_s, f) => ({ id_token_hint: f.forged }), 'id_token_hint must be an ID token signed by this login host'],
      ['another issuer', (_s, f) => ({ id_token_hint: f.otherIssuer }), 'id_token_hint must be issued by'],
      ['an access token as hint', (s) => ({ id_token_hint: s.access }), 'id_token_hint must be an ID token, not an access token'],
      ['garbage as hint', () => ({ id_token_hint: 'not-a-jwt' }), 'id_token_hint must be an ID token signed by this login host'],
      ['an unknown client_id', () => ({ client_id: 'ck_nobody' }), 'client_id must name an app registered here'],
      ['neither client_id nor hint', () => ({ post_logout_redirect_uri: REDIRECT }), 'client_id is required when there is no id_token_hint'],
      ['a state over 512 characters', (s) => ({ id_token_hint: s.idToken, state: 'x'.repeat(513) }), 'state must be at most 512 characters'],
    ])('%s', async (_what, params, message) => {
      const s = await signedIn();
      const { kid, key } = await h.identity.keys.signingKey();
      const { privateKey } = await generateKeyPair('RS256');
      const claims = decodeJwt(s.idToken);
      const forged = {
        forged: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey),
        otherIssuer: await new SignJWT({ ...claims, iss: 'https://login.evil.test' }).setProtectedHeader({ alg: 'RS256', kid }).sign(key),
      };
      const res = await endSession(s.browser, params(s, forged));
      expect(res.status).toBe(400);
      expect(res.location).toBeNull();
      expect(res.body).toContain(message.replace(/'/g, '&#39;'));
      expect(res.headers.getSetCookie().filter((c) => c.startsWith('wes_login'))).toEqual([]);
      expect(await me(s.access)).toBe(200);
      expect(await authorizeWith(s.browser)).toBe('code');
    });
  });
});
