import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { endUsers } from '../../db/schema';
import { hashPassword } from '../../src/accounts/passwords';
import { liveSession, revokeLoginSession } from '../../src/identity/login-sessions';
import { describeInChromium, IMPORT_MAP, launchChromium, startAppOrigin, type Listening } from '../support/browser-auth';
import { IdentityHarness } from '../support/identity-harness';

/**
 * sdk/browser-auth in headless Chromium against the real login host and API (IdentityHarness: both
 * in this process, on PGlite), through the hosted sign-in page: sign-out ends the login session
 * whatever the state of the tab's token, reaches the app's other tabs and leaves no window for an
 * immediate sign-in to find the old session; a sign-in finishes in another tab of the origin (the
 * sign-up mail's link); the token exchange's network failure and the API's 401 are the SDK's errors;
 * an expired token is renewed on demand.
 */
jest.setTimeout(90_000);

// Short enough to wait out, long enough for a sign-in and a few requests on a loaded machine.
const TOKEN_TTL_S = 6;
const PASSWORD = 'correct horse battery staple';

// The page's globals, named as such inside page.evaluate callbacks (they run in the browser).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const auth: any;
declare const requiresLogin: number;
declare const localStorage: { readonly length: number; key(i: number): string | null };
declare const sessionStorage: { readonly length: number };

describeInChromium('the browser auth SDK on the real login host: sign-out, tabs, renewal on demand', () => {
  let h: IdentityHarness;
  let appOrigin: Listening;
  let browser: Browser;
  let context: BrowserContext;
  let app: Awaited<ReturnType<IdentityHarness['provisionApp']>>;
  let email: string;
  let redirectUri: string;

  beforeAll(async () => {
    h = await IdentityHarness.start({ END_USER_TOKEN_TTL_S: String(TOKEN_TTL_S) });
    appOrigin = await startAppOrigin(
      () => `<!doctype html><html><head><title>app</title>${IMPORT_MAP}
<script type="module">
  import * as sdk from '/sdk/index.js';
  window.requiresLogin = 0;
  const config = ${JSON.stringify({ clientKey: app.client_key, loginUrl: h.loginUrl, identityApi: h.apiUrl, redirectUri, autoRenew: false })};
  window.auth = sdk.createAuthClient({ ...config, onRequiresLogin: () => { window.requiresLogin += 1; } });
</script></head><body><main>app</main></body></html>`,
    );
    redirectUri = `${appOrigin.url}/callback`;
    const org = await h.createOrg();
    app = await h.provisionApp(org.organization_uuid, [redirectUri], 'Sign-out app');
    const user = await h.createEndUser(app, org.organization_uuid);
    email = user.email;
    await h.db.update(endUsers).set({ passwordHash: await hashPassword(PASSWORD) }).where(eq(endUsers.endUserUuid, user.end_user_uuid));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await appOrigin?.close();
    await h?.stop();
  });
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(() => context?.close());

  const ready = (page: Page) => page.waitForFunction(() => auth !== undefined);
  async function openApp(path = '/'): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${appOrigin.url}${path}`);
    await ready(page);
    return page;
  }
  const handle = (page: Page) =>
    page.evaluate(() =>
      auth.handleCallback().then(
        (s: { token: string } | null) => (s ? { token: s.token } : null),
        (e: { name: string; code?: string; status?: number }) => ({ error: e.name, code: e.code, status: e.status }),
      ),
    );
  const onLogin = (page: Page) => page.url().startsWith(`${h.loginUrl}/`);
  const onApp = (page: Page) => page.url().startsWith(`${appOrigin.url}/`);

  /** signIn() through the hosted page (typing the password when it asks) back to the callback, handled. */
  async function signIn(page: Page): Promise<string> {
    await page.evaluate(() => void auth.signIn());
    await page.waitForURL((url) => url.pathname === '/sign-in' || url.toString().startsWith(`${redirectUri}?`));
    if (onLogin(page)) {
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${redirectUri}?`)), page.click('button[type=submit]')]);
    }
    await ready(page);
    const session = await handle(page);
    if (!session || 'error' in session) throw new Error(`sign-in failed: ${JSON.stringify(session)}`);
    return session.token;
  }

  /** Where signIn() takes the page now: straight back with a code (a live login session) or the sign-in page. */
  async function whereSignInGoes(page: Page): Promise<'sign-in page' | 'signed in without a password'> {
    await page.evaluate(() => void auth.signIn());
    await page.waitForURL((url) => url.pathname === '/sign-in' || url.toString().startsWith(`${redirectUri}?`));
    return onLogin(page) ? 'sign-in page' : 'signed in without a password';
  }

  const me = async (token: string) => (await h.api('/api/auth/me', token)).status;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** signOut() and the way back from the end-session endpoint, handled as on every page load. */
  async function signOutAndReturn(page: Page) {
    await page.evaluate(() => void auth.signOut());
    await page.waitForURL((url) => url.toString().startsWith(`${redirectUri}?state=`));
    await ready(page);
    expect(await handle(page)).toBeNull();
    expect(page.url()).toBe(redirectUri);
  }

  describe('signOut', () => {
    it('with an expired token ends the login session before the page is back, so signIn() right after asks for the password', async () => {
      const page = await openApp();
      const token = await signIn(page);
      const { sid, exp } = decodeJwt(token) as { sid: string; exp: number };
      await sleep(exp * 1000 - Date.now() + 200);
      expect(await page.evaluate(() => auth.getSession())).toBeNull();

      await signOutAndReturn(page);
      expect(await liveSession(h.db, sid)).toBeUndefined();
      expect(await whereSignInGoes(page)).toBe('sign-in page');
    });

    it('with a live token: the token is refused as soon as the page is back, and no other tab of the app keeps its session', async () => {
      const page = await openApp();
      const token = await signIn(page);
      const other = await openApp();
      // The other tab signs in silently on the same login session: its own token, the same sid.
      const otherToken = await signIn(other);
      expect(decodeJwt(otherToken).sid).toBe(decodeJwt(token).sid);

      await signOutAndReturn(page);
      expect(await me(token)).toBe(401);
      await other.waitForFunction(() => requiresLogin === 1);
      expect(await other.evaluate(() => auth.getSession())).toBeNull();
      expect(await other.evaluate(() => sessionStorage.length)).toBe(0);
      expect(await whereSignInGoes(page)).toBe('sign-in page');
    });

    it('from a tab that holds no token: the login host asks, and once confirmed the session is over', async () => {
      const signedIn = await openApp();
      const token = await signIn(signedIn);
      await signedIn.close();
      const page = await openApp();
      expect(await page.evaluate(() => auth.getSession())).toBeNull();

      await page.evaluate(() => void auth.signOut());
      await page.waitForURL((url) => url.toString().startsWith(`${h.loginUrl}/end-session?`));
      expect(await page.locator('main').innerText()).toContain(`You are signed in to Sign-out app as ${email}.`);
      expect(await me(token)).toBe(200);
      await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${redirectUri}?state=`)), page.click('button[type=submit]')]);
      await ready(page);
      expect(await handle(page)).toBeNull();
      expect(await me(token)).toBe(401);
      expect(await whereSignInGoes(page)).toBe('sign-in page');
    });
  });

  it("finishes a sign-in in another tab of the origin (the sign-up mail's link), once", async () => {
    const started = await openApp();
    await started.evaluate(() => void auth.signIn());
    await started.waitForURL((url) => url.pathname === '/sign-in');
    // The hosted pages carry state and code_challenge into the mailed link; the user opens it in a new tab.
    const mailed = started.url();
    const tab = await context.newPage();
    await tab.goto(mailed);
    await tab.fill('#email', email);
    await tab.fill('#password', PASSWORD);
    await Promise.all([tab.waitForURL((url) => url.toString().startsWith(`${redirectUri}?`)), tab.click('button[type=submit]')]);
    await ready(tab);
    const callback = tab.url();
    const session = await handle(tab);
    expect(session).toEqual({ token: expect.any(String) });
    expect(await me(session!.token)).toBe(200);
    // Used once: nothing of it is left, and the same callback in yet another tab is refused.
    expect(await tab.evaluate(() => Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i)).filter((k) => k?.startsWith('wfe-auth.transaction.')))).toEqual([]);
    const replay = await context.newPage();
    await replay.goto(callback);
    await ready(replay);
    expect(await handle(replay)).toEqual({ error: 'CallbackError', code: 'no_transaction', status: undefined });
  });

  it('a token exchange that cannot reach the API is a TokenRequestError (network_error), not a TypeError', async () => {
    const page = await openApp();
    await page.evaluate(() => void auth.signIn());
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${redirectUri}?`)), page.click('button[type=submit]')]);
    await ready(page);
    await page.route(`${h.apiUrl}/api/auth/end-user/token`, (route) => route.abort('internetdisconnected'));
    expect(await handle(page)).toEqual({ error: 'TokenRequestError', code: 'network_error', status: 0 });
  });

  describe('fetch', () => {
    it('renews an expired token first while the login session lives', async () => {
      const page = await openApp();
      const token = await signIn(page);
      await sleep((decodeJwt(token).exp as number) * 1000 - Date.now() + 200);
      const status = await page.evaluate(() => auth.fetch('/api/auth/me').then((r: Response) => r.status, (e: Error) => e.name));
      expect(status).toBe(200);
      const renewed = await page.evaluate(() => auth.getSession()?.token);
      expect(renewed).not.toBe(token);
      expect(decodeJwt(renewed).sid).toBe(decodeJwt(token).sid);
    });

    it("treats the API's 401 as login required: the session is cleared, onRequiresLogin called, LoginRequiredError thrown", async () => {
      const page = await openApp();
      const token = await signIn(page);
      const { sid } = decodeJwt(token) as { sid: string };
      // Ended elsewhere (an org member's identity.end-user.session.revoke does this): this tab's token is refused.
      await revokeLoginSession(h.db, { organization_uuid: decodeJwt(token).org as string, sid });
      const outcome = await page.evaluate(() => auth.fetch('/api/auth/me').then((r: Response) => r.status, (e: Error) => e.name));
      expect(outcome).toBe('LoginRequiredError');
      expect(await page.evaluate(() => requiresLogin)).toBe(1);
      expect(await page.evaluate(() => auth.getSession())).toBeNull();
    });
  });
});
