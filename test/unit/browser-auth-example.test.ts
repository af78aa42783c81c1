import type { Browser, Page } from 'playwright-core';
import { LoginHostDouble } from '../doubles/login-host-double';
import { describeInChromium, launchChromium } from '../support/browser-auth';
import { startExampleApp, type ExampleApp } from '../support/example-app';

/**
 * The sample app (sdk/browser-auth/example, served by its own serve.mjs) in headless Chromium
 * against the login host double: sign in, email shown, a run started and its streamed transitions
 * shown, a silent renewal handed over by the example page loaded in the hidden frame, login_required
 * on the next one, sign in again, sign out.
 * test/integration/browser-auth-e2e.test.ts runs the same app against the real service.
 */
jest.setTimeout(60_000);

describeInChromium('the browser auth sample app in headless Chromium (login host double)', () => {
  let browser: Browser;
  let login: LoginHostDouble;
  let example: ExampleApp;
  let page: Page;

  beforeAll(async () => {
    login = await new LoginHostDouble().start();
    login.ttlSeconds = 6;
    example = await startExampleApp({
      WFE_CLIENT_KEY: 'ck_example_unit',
      WFE_LOGIN_URL: login.login.url,
      WFE_API_URL: login.api.url,
      WFE_WORKFLOW_TYPE: 'demo.exposed',
      WFE_RENEW_SKEW_SECONDS: '3',
    });
    browser = await launchChromium();
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await example?.stop();
    await login?.stop();
  });

  it('signs in, shows the email, streams a run, renews silently, meets login_required, signs in again and out', async () => {
    await page.goto(`${example.url}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#email', { hasText: login.email }).waitFor();
    expect(page.url()).toBe(`${example.url}/`);

    await page.getByRole('button', { name: 'Start the run' }).click();
    await page.locator('#result', { hasText: 'Completed.' }).waitFor();
    expect(await page.locator('#transitions li').allInnerTexts()).toEqual(['PENDING → RUNNING (start)', 'RUNNING → COMPLETED (finish)']);
    const bearer = `Bearer ${login.issued[0]}`;
    const runCalls = login.requests.filter((r) => r.url.startsWith('/api/workflows/') && r.method !== 'OPTIONS');
    expect(runCalls.map((r) => [r.method, r.url.replace(/wf_[^/]+/, 'wf_*'), r.authorization])).toEqual([
      ['POST', '/api/workflows/start', bearer],
      ['GET', '/api/workflows/wf_*/stream', bearer],
    ]);

    // A 6 s token renewed 3 s before expiry, through the example page loaded in the hidden frame.
    const deadline = Date.now() + 8000;
    while (login.issued.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(login.issued).toHaveLength(2);
    expect(login.silentAuthorizes()).toBe(1);
    expect(await page.locator('#email').innerText()).toBe(login.email);

    login.promptNone = 'login_required';
    await page.getByRole('button', { name: 'Renew now' }).click();
    await page.locator('#renew-result', { hasText: 'Renewal failed: LoginRequiredError.' }).waitFor();
    expect(await page.locator('#status').innerText()).toBe('Your session has ended: sign in again.');
    expect(await page.locator('#signed-in').isHidden()).toBe(true);

    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#email', { hasText: login.email }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Through the login host's end-session endpoint and back: the page loads anew, signed out.
    await page.waitForURL(`${example.url}/`);
    await page.locator('#status', { hasText: 'Signed out.' }).waitFor();
    expect(await page.locator('#signed-in').isHidden()).toBe(true);
    const endSession = new URL(login.requests.find((r) => r.url.startsWith('/end-session?'))!.url, login.issuer).searchParams;
    expect(endSession.get('id_token_hint')).toBe(login.idTokens.at(-1));
    expect(endSession.get('post_logout_redirect_uri')).toBe(`${example.url}/`);
  });
});
