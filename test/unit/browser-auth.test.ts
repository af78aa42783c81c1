import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { LoginHostDouble } from '../doubles/login-host-double';
import { describeInChromium, IMPORT_MAP, launchChromium, startAppOrigin, type Listening } from '../support/browser-auth';

/**
 * sdk/browser-auth in headless Chromium: the built ES module loaded by a page on one loopback
 * origin, against a login host double (test/doubles/login-host-double.ts) on two others. Every check
 * runs in the browser, since the SDK's subject matter (redirects, history, Web Storage, frames,
 * postMessage, timers, Web Crypto) is the browser's.
 */
jest.setTimeout(60_000);

const CLIENT_KEY = 'ck_browser_auth_unit';

/** What the test page puts on window (see PAGE); typed loosely, as the page's code is plain JS. */
interface PageGlobals {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  auth: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sdk: any;
  liveTimers: Map<number, number>;
  requiresLogin: number;
  customStore: Map<string, string>;
  sessionStorage: { length: number; getItem(k: string): string | null; key(i: number): string | null };
  localStorage: { length: number; getItem(k: string): string | null; setItem(k: string, v: string): void; key(i: number): string | null };
  location: { href: string };
  document: { querySelectorAll(selector: string): { length: number } };
}

interface PageConfig {
  loginUrl: string;
  identityApi: string;
  redirectUri: string;
  storage: string;
  autoRenew: boolean;
  renewSkewSeconds: number;
  renewTimeoutSeconds: number;
}

let config: PageConfig;

/**
 * The app: timers counted before the SDK loads (so a test can see how many it keeps), then one
 * client built from the current config, on every load, the renewal frame's included.
 */
const PAGE = () => `<!doctype html><html><head><title>app</title>${IMPORT_MAP}
<script>
  window.liveTimers = new Map();
  const set = window.setTimeout.bind(window), clear = window.clearTimeout.bind(window);
  window.setTimeout = (fn, ms, ...args) => { const id = set(() => { window.liveTimers.delete(id); fn(...args); }, ms); window.liveTimers.set(id, ms); return id; };
  window.clearTimeout = (id) => { window.liveTimers.delete(id); clear(id); };
</script>
<script type="module">
  import * as sdk from '/sdk/index.js';
  const config = ${JSON.stringify(config)};
  window.customStore = new Map();
  const storage = config.storage === 'custom'
    ? { getItem: (k) => window.customStore.get(k) ?? null, setItem: (k, v) => window.customStore.set(k, v), removeItem: (k) => window.customStore.delete(k) }
    : config.storage;
  window.requiresLogin = 0;
  window.sdk = sdk;
  window.auth = sdk.createAuthClient({ clientKey: '${CLIENT_KEY}', ...config, storage, onRequiresLogin: () => { window.requiresLogin += 1; } });
</script></head><body><main>app</main></body></html>`;

describeInChromium('the browser auth SDK in headless Chromium', () => {
  let browser: Browser;
  let app: Listening;
  let login: LoginHostDouble;
  let context: BrowserContext;

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startAppOrigin(PAGE);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  beforeEach(async () => {
    login = await new LoginHostDouble().start();
    context = await browser.newContext();
  });
  afterEach(async () => {
    await context?.close();
    await login?.stop();
  });

  async function openApp(overrides: Partial<PageConfig> = {}): Promise<{ page: Page; urls: string[] }> {
    config = {
      loginUrl: login.login.url,
      identityApi: login.api.url,
      redirectUri: `${app.url}/callback`,
      storage: 'sessionStorage',
      autoRenew: false,
      renewSkewSeconds: 60,
      renewTimeoutSeconds: 5,
      ...overrides,
    };
    const page = await context.newPage();
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    await page.goto(`${app.url}/`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
    return { page, urls };
  }

  /** signIn() and the redirect back; the page is then on the callback URL, not yet handled. */
  async function backFromLogin(page: Page): Promise<void> {
    await page.evaluate(() => void (globalThis as unknown as PageGlobals).auth.signIn());
    await page.waitForURL(/\/callback\?/);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
  }

  async function handle(page: Page) {
    return page.evaluate(() =>
      (globalThis as unknown as PageGlobals).auth.handleCallback().then(
        (s: { token: string; email: string; endUserUuid: string; expiresAt: Date; claims: Record<string, unknown> } | null) =>
          s && { ...s, expiresAt: s.expiresAt.getTime() },
        (e: { name: string; code?: string }) => ({ error: e.name, code: e.code }),
      ),
    );
  }

  async function signedIn(overrides: Partial<PageConfig> = {}) {
    const { page, urls } = await openApp(overrides);
    await backFromLogin(page);
    const session = await handle(page);
    if (!session || 'error' in session) throw new Error(`sign-in failed: ${JSON.stringify(session)}`);
    return { page, urls, session };
  }

  const storedKeys = (page: Page) =>
    page.evaluate(() => {
      const g = globalThis as unknown as PageGlobals;
      const session: string[] = [];
      for (let i = 0; i < g.sessionStorage.length; i++) session.push(g.sessionStorage.key(i)!);
      return { session: session.sort(), local: g.localStorage.length, custom: [...g.customStore.keys()].sort() };
    });
  const sessionOf = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).auth.getSession()?.token ?? null);
  const liveTimers = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).liveTimers.size);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  describe('signIn and handleCallback', () => {
    it('redirects with an S256 challenge of the stored verifier, exchanges code + verifier, stores the session and cleans the address bar', async () => {
      const { page, urls, session } = await signedIn();

      const authorize = new URL(login.requests.find((r) => r.url.startsWith('/authorize'))!.url, login.issuer).searchParams;
      expect(Object.fromEntries(authorize)).toEqual({
        response_type: 'code',
        scope: 'openid',
        client_key: CLIENT_KEY,
        redirect_uri: `${app.url}/callback`,
        state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        code_challenge_method: 'S256',
      });
      const exchange = JSON.parse(login.requests.find((r) => r.url === '/api/auth/end-user/token')!.body) as {
        code: string;
        code_verifier: string;
      };
      expect(exchange.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(createHash('sha256').update(exchange.code_verifier).digest('base64url')).toBe(authorize.get('code_challenge'));

      expect(session.token).toBe(login.issued[0]);
      expect(session.email).toBe(login.email);
      expect(session.endUserUuid).toBe(login.endUserUuid);
      expect(session.claims).toMatchObject({ iss: login.issuer, aud: CLIENT_KEY, sid: login.sid });
      expect(session.expiresAt).toBeGreaterThan(Date.now() + 500_000);

      expect(page.url()).toBe(`${app.url}/callback`);
      // The ID token beside it: signOut() sends it as id_token_hint.
      expect(await storedKeys(page)).toEqual({ session: [`wfe-auth.id-token.${CLIENT_KEY}`, `wfe-auth.session.${CLIENT_KEY}`], local: 0, custom: [] });
      expect(await sessionOf(page)).toBe(session.token);
      // The token never travelled in a URL, neither the browser's nor the servers'.
      expect([...urls, ...login.requests.map((r) => r.url)].filter((u) => u.includes(session.token))).toEqual([]);
    });

    it('answers null on a page that is not a callback', async () => {
      const { page } = await openApp();
      expect(await handle(page)).toBeNull();
      expect(login.requests).toEqual([]);
    });

    it.each([
      // The forged state leaves the real sign-in's transaction to its own callback.
      ['a state it did not send', { stateOverride: 'forged-state' }, 'state_mismatch', 1],
      ['another issuer', { issOverride: 'http://127.0.0.1:9/' }, 'iss_mismatch', 0],
      ['no iss', { issOverride: null }, 'iss_mismatch', 0],
    ])('refuses a callback with %s: CallbackError, no exchange, nothing stored', async (_what, forge, code, transactionsLeft) => {
      Object.assign(login, forge);
      const { page } = await openApp();
      await backFromLogin(page);
      expect(await handle(page)).toEqual({ error: 'CallbackError', code });
      expect(login.tokenExchanges()).toBe(0);
      expect(await storedKeys(page)).toEqual({ session: [], local: transactionsLeft, custom: [] });
      expect(await sessionOf(page)).toBeNull();
      expect(page.url()).toBe(`${app.url}/callback`);
    });

    it('refuses a callback whose sign-in was started over 30 minutes ago, and forgets that transaction', async () => {
      const { page } = await openApp();
      await backFromLogin(page);
      await page.evaluate(() => {
        const { localStorage } = globalThis as unknown as PageGlobals;
        const key = localStorage.key(0)!;
        localStorage.setItem(key, JSON.stringify({ ...JSON.parse(localStorage.getItem(key)!), expiresAt: Date.now() - 1 }));
      });
      expect(await handle(page)).toEqual({ error: 'CallbackError', code: 'no_transaction' });
      expect(login.tokenExchanges()).toBe(0);
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [] });
    });

    it('refuses a callback replayed in a tab that started no sign-in', async () => {
      const { page } = await openApp();
      await backFromLogin(page);
      const callback = page.url();
      const other = await (await browser.newContext()).newPage();
      try {
        await other.goto(callback);
        await other.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
        expect(await handle(other)).toEqual({ error: 'CallbackError', code: 'no_transaction' });
        expect(login.tokenExchanges()).toBe(0);
      } finally {
        await other.context().close();
      }
    });
  });

  describe('storage choices', () => {
    it('localStorage holds the token only when chosen', async () => {
      const { page, session } = await signedIn({ storage: 'localStorage' });
      const where = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).localStorage.getItem('wfe-auth.session.ck_browser_auth_unit'),
      );
      expect(where).toBe(session.token);
      expect((await storedKeys(page)).session).toEqual([]);
    });

    it('memory keeps it in the page only: gone on reload', async () => {
      const { page, session } = await signedIn({ storage: 'memory' });
      expect(await sessionOf(page)).toBe(session.token);
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [] });
      await page.reload();
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
      expect(await sessionOf(page)).toBeNull();
    });

    it('a caller-supplied store receives it', async () => {
      const { page, session } = await signedIn({ storage: 'custom' });
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [`wfe-auth.id-token.${CLIENT_KEY}`, `wfe-auth.session.${CLIENT_KEY}`] });
      expect(await sessionOf(page)).toBe(session.token);
    });

    it('sessionStorage (the default) survives a reload; an expired token is no session', async () => {
      login.ttlSeconds = 4; // time for sign-in and a reload before it expires, on a loaded machine too
      const { page, session } = await signedIn();
      await page.reload();
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
      expect(await sessionOf(page)).toBe(session.token);
      await sleep(session.expiresAt - Date.now() + 100);
      expect(await sessionOf(page)).toBeNull();
    });
  });

  describe('renew through the hidden frame', () => {
    it('exchanges a new code handed over by the frame, stores the new token and removes the frame', async () => {
      const { page, session } = await signedIn();
      const renewed = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).auth.renew().then((s: { token: string }) => s.token),
      );
      expect(renewed).toBe(login.issued[1]);
      expect(renewed).not.toBe(session.token);
      expect(await sessionOf(page)).toBe(renewed);
      expect(login.silentAuthorizes()).toBe(1);
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('iframe').length)).toBe(0);
    });

    it('login_required: clears local state, calls onRequiresLogin once, throws LoginRequiredError and does not retry', async () => {
      const { page } = await signedIn({ autoRenew: true });
      login.promptNone = 'login_required';
      const outcome = await page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        return g.auth.renew().then(
          () => 'renewed',
          (e: Error) => ({ name: e.name, typed: e instanceof g.sdk.LoginRequiredError }),
        );
      });
      expect(outcome).toEqual({ name: 'LoginRequiredError', typed: true });
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).requiresLogin)).toBe(1);
      expect(await sessionOf(page)).toBeNull();
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [] });
      expect(await liveTimers(page)).toBe(0);
      await sleep(1500);
      expect(login.silentAuthorizes()).toBe(1);
    });

    it('times out cleanly when the frame never answers, ignoring a message posted from another origin', async () => {
      const { page, session } = await signedIn({ renewTimeoutSeconds: 1 });
      login.promptNone = 'hang';
      const started = Date.now();
      const outcome = await page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        return g.auth.renew().then(
          () => 'renewed',
          (e: Error) => ({ name: e.name, typed: e instanceof g.sdk.RenewTimeoutError }),
        );
      });
      expect(outcome).toEqual({ name: 'RenewTimeoutError', typed: true });
      expect(Date.now() - started).toBeLessThan(4000);
      // The frame's forged code was never exchanged, and the session is untouched.
      expect(login.tokenExchanges()).toBe(1);
      expect(await sessionOf(page)).toBe(session.token);
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('iframe').length)).toBe(0);
      expect(await liveTimers(page)).toBe(0);
    });
  });

  describe('autoRenew timer', () => {
    it('renews renewSkewSeconds before expiry with one timer at a time', async () => {
      login.ttlSeconds = 6;
      const { page } = await signedIn({ autoRenew: true, renewSkewSeconds: 3 });
      expect(await liveTimers(page)).toBe(1);
      // Each renewal reschedules: the earlier timers must be gone, not stacked.
      for (let i = 0; i < 3; i++) await page.evaluate(() => (globalThis as unknown as PageGlobals).auth.renew());
      expect(await liveTimers(page)).toBe(1);
      const before = login.silentAuthorizes();
      expect(before).toBe(3);
      const lastToken = await sessionOf(page);
      await page.waitForFunction((token) => (globalThis as unknown as PageGlobals).auth.getSession()?.token !== token, lastToken, {
        timeout: 6000,
      });
      const renewedAfter = Date.now();
      await sleep(1500);
      expect(login.silentAuthorizes()).toBe(before + 1);
      expect(await liveTimers(page)).toBe(1);
      const session = await page.evaluate(() => (globalThis as unknown as PageGlobals).auth.getSession().expiresAt.getTime());
      expect(session).toBeGreaterThan(renewedAfter + 3000);
    });

    it('signOut({endLoginSession: false}) stops the timer and clears the session, and leaves the page where it is', async () => {
      login.ttlSeconds = 6;
      const { page, session } = await signedIn({ autoRenew: true, renewSkewSeconds: 2 });
      expect(await liveTimers(page)).toBe(1);
      await page.evaluate(() => (globalThis as unknown as PageGlobals).auth.signOut({ endLoginSession: false }));
      expect(await liveTimers(page)).toBe(0);
      expect(await sessionOf(page)).toBeNull();
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [] });
      expect(page.url()).toBe(`${app.url}/callback`);
      // Past the time the timer was due (4 s after issuance at the latest).
      await sleep(session.expiresAt - 2000 - Date.now() + 500);
      expect(login.silentAuthorizes()).toBe(0);
      expect(login.count((r) => r.url.startsWith('/end-session'))).toBe(0);
    });
  });

  describe('signOut', () => {
    it("tells the app's other tabs, sends the page to the end-session endpoint with the ID token as hint, and handleCallback completes the return", async () => {
      const { page } = await signedIn();
      const other = await context.newPage();
      await other.goto(`${app.url}/`);
      await other.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);

      await page.evaluate(() => void (globalThis as unknown as PageGlobals).auth.signOut());
      await page.waitForURL(/\/callback\?state=/);
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
      const endSession = new URL(login.requests.find((r) => r.url.startsWith('/end-session'))!.url, login.issuer).searchParams;
      expect(Object.fromEntries(endSession)).toEqual({
        client_id: CLIENT_KEY,
        post_logout_redirect_uri: `${app.url}/callback`,
        state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        id_token_hint: login.idTokens[0],
      });
      expect(await handle(page)).toBeNull();
      expect(page.url()).toBe(`${app.url}/callback`);
      expect(await sessionOf(page)).toBeNull();
      expect(await storedKeys(page)).toEqual({ session: [], local: 0, custom: [] });
      expect(await other.evaluate(() => (globalThis as unknown as PageGlobals).requiresLogin)).toBe(1);
      // The access token never travelled in a URL; the ID token did, as RP-Initiated Logout has it.
      expect(login.requests.filter((r) => r.url.includes(login.issued[0]))).toEqual([]);
    });

    it('leaves a state in the address bar alone when no sign-out of this tab went out', async () => {
      const { page } = await openApp();
      await page.goto(`${app.url}/callback?state=someone-elses`);
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).auth !== undefined);
      expect(await handle(page)).toBeNull();
      expect(page.url()).toBe(`${app.url}/callback?state=someone-elses`);
    });
  });

  describe('verify, register and the fetch helper', () => {
    const verify = (page: Page, token: string) =>
      page.evaluate(
        (t) =>
          (globalThis as unknown as PageGlobals).auth.verify(t).then(
            (c: { sub: string }) => c.sub,
            (e: Error) => e.name,
          ),
        token,
      );
    const jwksFetches = () => login.count((r) => r.url === '/api/auth/end-user/jwks');

    it('verifies RS256 against the cached JWKS, refetches on an unknown kid, refuses a wrong aud or iss', async () => {
      const { page, session } = await signedIn();
      expect(await verify(page, session.token)).toBe(login.endUserUuid);
      expect(await verify(page, session.token)).toBe(login.endUserUuid);
      expect(jwksFetches()).toBe(1);
      await sleep(1100);
      await login.rotate();
      expect(await verify(page, await login.sign({}, CLIENT_KEY))).toBe(login.endUserUuid);
      expect(jwksFetches()).toBe(2);
      expect(await verify(page, await login.sign({}, 'ck_another_app'))).toBe('InvalidTokenError');
      expect(await verify(page, await login.sign({ iss: 'http://127.0.0.1:9' }, CLIENT_KEY))).toBe('InvalidTokenError');
      const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${session.token.split('.')[1]}.`;
      expect(await verify(page, unsigned)).toBe('InvalidTokenError');
    });

    it('register posts {client_key, email, password}; a taken email is an ApiRequestError 409', async () => {
      const { page } = await openApp();
      const ok = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).auth.register('new@example.test', 'long enough password'),
      );
      expect(ok).toEqual({ end_user_uuid: expect.any(String), email_verification: 'sent' });
      expect(JSON.parse(login.requests.find((r) => r.url === '/api/auth/end-user/register')!.body)).toEqual({
        client_key: CLIENT_KEY,
        email: 'new@example.test',
        password: 'long enough password',
      });
      const taken = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).auth
          .register('taken@example.test', 'long enough password')
          .catch((e: { name: string; status: number; code: string }) => ({
            name: e.name,
            status: e.status,
            code: e.code,
          })),
      );
      expect(taken).toEqual({ name: 'ApiRequestError', status: 409, code: 'email_taken' });
    });

    it('fetch sends the current token in the Authorization header; without a session it throws LoginRequiredError', async () => {
      const { page: anonymous } = await openApp();
      const refused = await anonymous.evaluate(() =>
        (globalThis as unknown as PageGlobals).auth.fetch('/api/workflows/start', { method: 'POST', body: '{}' }).then(
          () => 'sent',
          (e: Error) => e.name,
        ),
      );
      expect(refused).toBe('LoginRequiredError');
      expect(login.count((r) => r.url === '/api/workflows/start')).toBe(0);

      const { page, session } = await signedIn();
      const status = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).auth
          .fetch('/api/workflows/start', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"workflow_type":"x"}' })
          .then((r: { status: number }) => r.status),
      );
      expect(status).toBe(201);
      expect(login.requests.find((r) => r.url === '/api/workflows/start')!.authorization).toBe(`Bearer ${session.token}`);
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).auth.authorizationHeader())).toBe(`Bearer ${session.token}`);
    });
  });
});
