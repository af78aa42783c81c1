import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { waitForLink } from '../support/accounts';
import { uniqueId } from '../support/api';
import { describeInChromium, launchChromium } from '../support/browser-auth';
import { startExampleApp, type ExampleApp } from '../support/example-app';
import { ExtraApi } from '../support/extra-api';
import { freePort, waitFor } from '../support/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';

/**
 * Issue 12 end to end: the sample app (sdk/browser-auth/example, its own serve.mjs) on another
 * loopback origin, in headless Chromium, against the real service (API, login host and worker on a
 * Temporal dev server of its own, end-user tokens living 12 s). Sign in through the hosted page →
 * handleCallback → getSession → an exposed workflow started with the end-user token and watched to
 * completion → auto-renew through the hidden frame before expiry → the session revoked with
 * identity.end-user.session.revoke → the next renew fires onRequiresLogin and throws
 * LoginRequiredError → sign in again and signOut through the end-session endpoint. The steps share
 * one browser page, in order.
 */
jest.setTimeout(120_000);

const TOKEN_TTL_S = 12;
const RENEW_SKEW_S = 6;
const EMAIL = `${uniqueId('ada')}@example.test`;
const PASSWORD = 'correct horse battery staple';

interface RunView {
  status: string;
  state_data?: Record<string, unknown>;
}

describeInChromium('browser auth end to end: the sample app on the real service', () => {
  let temporal: TemporalDevServer;
  let extra: ExtraApi;
  let example: ExampleApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let loginUrl: string;
  let orgToken: string;
  let clientKey: string;
  const silentAuthorizes: string[] = [];
  const pageUrls: string[] = [];

  async function api<T>(method: string, route: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${extra.url}/api${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as T };
  }

  async function runToEnd(workflowType: string, initialData: Record<string, unknown>, token: string): Promise<RunView> {
    const started = await api<{ workflow_id: string }>('POST', '/workflows/start', token, {
      workflow_type: workflowType,
      initial_data: initialData,
    });
    expect(started.status).toBe(201);
    return waitFor(`${workflowType} to end`, async () => {
      const run = await api<RunView>('GET', `/workflows/${started.body.workflow_id}`, token);
      return run.body.status === 'RUNNING' ? undefined : run.body;
    });
  }

  const storedToken = (p: Page) =>
    p.evaluate(
      (key) => (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem(key),
      `wfe-auth.session.${clientKey}`,
    );

  /** From the app's Sign in button through the hosted sign-in form and back. */
  async function signInThroughHostedPage(p: Page): Promise<string> {
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL((url) => url.toString().startsWith(`${loginUrl}/`));
    await p.fill('input[name=email]', EMAIL);
    await p.fill('input[name=password]', PASSWORD);
    await p.locator('form button[type=submit]').click();
    await p.locator('#email', { hasText: EMAIL }).waitFor();
    const token = await storedToken(p);
    expect(token).toEqual(expect.any(String));
    return token!;
  }

  // A Temporal dev server, the service and a first run on a loaded machine: more than the default.
  beforeAll(async () => {
    const loginPort = await freePort();
    loginUrl = `http://127.0.0.1:${loginPort}`;
    temporal = await startTemporalDevServer(path.join(process.env.TEST_WORK_DIR!, 'browser-auth-e2e-temporal.log'));
    extra = new ExtraApi(
      {
        TEMPORAL_ADDRESS: temporal.address,
        // Where the outbox is (ExtraApi replaces it with a directory of its own on PGlite).
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'browser-auth-e2e-')),
        LOGIN_PORT: String(loginPort),
        END_USER_TOKEN_TTL_S: String(TOKEN_TTL_S),
        // A revoked session must be refused at once, not after the token cache's few seconds.
        TOKEN_CACHE_TTL_MS: '0',
        WORKFLOW_BUNDLE_PATH: path.join(__dirname, '..', '..', 'dist', 'workflow-bundle.js'),
      },
      'all',
    );
    await extra.start();
    orgToken = JSON.parse(extra.cli(['org', 'create', uniqueId('browser-auth'), '--json'])).token;

    // The sample app's port is known once it listens: the app is provisioned first, then given it.
    const provisioned = await runToEnd(
      'identity.app.provision',
      { name: 'Browser auth e2e', redirect_uris: ['http://127.0.0.1:9/'] },
      orgToken,
    );
    expect(provisioned.status).toBe('COMPLETED');
    clientKey = provisioned.state_data!.client_key as string;

    const registered = await fetch(`${extra.url}/api/auth/end-user/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_key: clientKey, email: EMAIL, password: PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const link = await waitForLink(EMAIL, '/verify-email', 0, path.join(extra.env.DATA_DIR!, 'outbox'));
    const verifyToken = link.searchParams.get('token');
    const verified = await fetch(`${extra.url}/api/auth/end-user/verify-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: verifyToken }),
    });
    expect(verified.status).toBe(200);

    example = await startExampleApp({
      WFE_CLIENT_KEY: clientKey,
      WFE_LOGIN_URL: loginUrl,
      WFE_API_URL: extra.url,
      WFE_WORKFLOW_TYPE: 'identity.end-user.session.revoke',
      WFE_RENEW_SKEW_SECONDS: String(RENEW_SKEW_S),
    });
    const configured = await runToEnd(
      'identity.app.configure-client',
      { client_key: clientKey, add_redirect_uris: [`${example.url}/`], remove_redirect_uris: ['http://127.0.0.1:9/'] },
      orgToken,
    );
    expect(configured.status).toBe('COMPLETED');
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('request', (r) => {
      pageUrls.push(r.url());
      if (r.url().startsWith(`${loginUrl}/authorize?`) && new URL(r.url()).searchParams.get('prompt') === 'none') {
        silentAuthorizes.push(r.frame() === page.mainFrame() ? 'main frame' : 'hidden frame');
      }
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await example?.stop();
    await extra?.stop();
    await temporal?.stop();
  });

  let firstToken: string;

  it('signs in through the hosted page: handleCallback stores the session, getSession shows it after a reload', async () => {
    await page.goto(`${example.url}/`);
    firstToken = await signInThroughHostedPage(page);
    expect(page.url()).toBe(`${example.url}/`);
    const claims = decodeJwt(firstToken);
    expect(claims).toMatchObject({ iss: loginUrl, aud: clientKey, email: EMAIL, token_type: 'end_user' });
    expect(claims.exp! - claims.iat!).toBe(TOKEN_TTL_S);

    await page.reload();
    await page.locator('#email', { hasText: EMAIL }).waitFor();
    const me = await api<Record<string, unknown>>('GET', '/auth/me', firstToken);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ token_type: 'end_user', principal_type: 'end_user', username: EMAIL });
  });

  it("starts an exposed workflow with the end-user token and shows its streamed transitions to completion (revoking the user's other session)", async () => {
    // A second sign-in of the same user in another browser: the session the run revokes.
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await otherPage.goto(`${example.url}/`);
    const otherToken = await signInThroughHostedPage(otherPage);
    await other.close();
    const otherSid = decodeJwt(otherToken).sid as string;
    expect(otherSid).not.toBe(decodeJwt(firstToken).sid);
    expect((await api('GET', '/auth/me', otherToken)).status).toBe(200);

    await page.fill('#input', JSON.stringify({ sid: otherSid }));
    await page.getByRole('button', { name: 'Start the run' }).click();
    await page.locator('#result', { hasText: 'Completed.' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#transitions li').allInnerTexts()).toEqual(['PENDING → COMPLETED (execute)']);
    const runId = await page.locator('#run-id').innerText();
    const run = await api<RunView>('GET', `/workflows/${runId}`, (await storedToken(page))!);
    expect(run.body).toMatchObject({ status: 'COMPLETED', state_data: expect.objectContaining({ sid: otherSid, revoked_sessions: 1 }) });
    expect((await api('GET', '/auth/me', otherToken)).status).toBe(401);
  });

  it('renews the token through the hidden frame before it expires', async () => {
    const before = (await storedToken(page))!;
    const expiresAt = decodeJwt(before).exp! * 1000;
    const renewed = await waitFor(
      'the automatic renewal',
      async () => {
        const now = (await storedToken(page))!;
        return now !== before ? { token: now, at: Date.now() } : undefined;
      },
      TOKEN_TTL_S * 1000,
      100,
    );
    expect(renewed.at).toBeLessThan(expiresAt);
    expect(silentAuthorizes).toContain('hidden frame');
    expect(silentAuthorizes).not.toContain('main frame');
    expect(decodeJwt(renewed.token).exp!).toBeGreaterThan(decodeJwt(before).exp!);
    expect(decodeJwt(renewed.token).sid).toBe(decodeJwt(firstToken).sid);
    expect((await api('GET', '/auth/me', renewed.token)).status).toBe(200);
    expect(await page.locator('#email').innerText()).toBe(EMAIL);
    expect(await page.locator('iframe').count()).toBe(0);
  });

  it('after identity.end-user.session.revoke, the next renew fires onRequiresLogin and throws LoginRequiredError', async () => {
    const token = (await storedToken(page))!;
    const revoked = await runToEnd('identity.end-user.session.revoke', { sid: decodeJwt(token).sid }, orgToken);
    expect(revoked).toMatchObject({ status: 'COMPLETED', state_data: expect.objectContaining({ revoked_sessions: 1 }) });
    expect((await api('GET', '/auth/me', token)).status).toBe(401);

    await page.getByRole('button', { name: 'Renew now' }).click();
    await page.locator('#renew-result', { hasText: 'Renewal failed: LoginRequiredError.' }).waitFor();
    expect(await page.locator('#status').innerText()).toBe('Your session has ended: sign in again.');
    expect(await page.locator('#signed-in').isHidden()).toBe(true);
    expect(await storedToken(page)).toBeNull();
  });

  it('signs in again, then signOut clears the session and ends the login session', async () => {
    const token = await signInThroughHostedPage(page);
    expect((await api('GET', '/auth/me', token)).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Through the login host's end-session endpoint, which ends the session before it sends the page back.
    await page.locator('#status', { hasText: 'Signed out.' }).waitFor();
    expect(page.url()).toBe(`${example.url}/`);
    expect(await storedToken(page)).toBeNull();
    expect((await api('GET', '/auth/me', token)).status).toBe(401);
    // The login host's session is gone too: a silent renewal now needs a sign-in.
    await page.getByRole('button', { name: 'Renew now' }).click();
    await page.locator('#renew-result', { hasText: 'Renewal failed: LoginRequiredError.' }).waitFor();
    // No token ever travelled in a URL.
    const tokens = [firstToken, token];
    expect(pageUrls.filter((u) => tokens.some((t) => u.includes(t)))).toEqual([]);
  });
});
