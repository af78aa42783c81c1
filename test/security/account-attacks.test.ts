import { totpCode } from '../../src/accounts/totp';
import {
  authorizeParams,
  Browser,
  closeBrowsers,
  hiddenFields,
  type ProvisionedApp,
  provisionApp,
  signInPath,
  uniqueEmail,
  verifiedAccount,
} from '../support/accounts';

/**
 * Attacks on the hosted account pages of the login host (issue 11), on the real stack: each is
 * refused with nothing issued (no login session cookie, no redirect to /authorize).
 */
const PASSWORD = 'correct horse battery staple';
let app: ProvisionedApp;
let email: string;

beforeAll(async () => {
  app = await provisionApp('Account attacks');
  email = await verifiedAccount(app, PASSWORD);
});
afterAll(closeBrowsers);

const issuedNothing = (res: { status: number; location: string | null; headers: Headers }) => {
  expect(res.location).toBeNull();
  expect(res.headers.getSetCookie().some((c) => c.startsWith('wes_login='))).toBe(false);
};

it('a sign-in form posted without its CSRF field is refused, even with the right password', async () => {
  const browser = new Browser();
  const form = await browser.get(signInPath(authorizeParams(app).query));
  const { csrf_token: _dropped, ...fields } = hiddenFields(form.body, '/sign-in');
  const res = await browser.request('/sign-in', { form: { ...fields, email, password: PASSWORD } });
  expect(res.status).toBe(403);
  expect(res.body).toContain('This form has expired');
  issuedNothing(res);
});

it("a sign-in form carrying another browser's CSRF token (a cross-site post) is refused", async () => {
  const victim = new Browser();
  await victim.get(signInPath(authorizeParams(app).query));
  const attacker = new Browser();
  const attackerForm = await attacker.get(signInPath(authorizeParams(app).query));
  const res = await victim.request('/sign-in', { form: { ...hiddenFields(attackerForm.body, '/sign-in'), email, password: PASSWORD } });
  expect(res.status).toBe(403);
  issuedNothing(res);
});

it('a sign-in form posted from a browser without the CSRF cookie is refused', async () => {
  const form = await new Browser().get(signInPath(authorizeParams(app).query));
  const res = await new Browser().request('/sign-in', { form: { ...hiddenFields(form.body, '/sign-in'), email, password: PASSWORD } });
  expect(res.status).toBe(403);
  issuedNothing(res);
});

it('a planted CSRF cookie with a field of the same value is refused', async () => {
  const browser = new Browser();
  const form = await browser.get(signInPath(authorizeParams(app).query));
  const planted = 'A'.repeat(43);
  browser.cookies.set('wfe_csrf', planted);
  const res = await browser.request('/sign-in', { form: { ...hiddenFields(form.body, '/sign-in'), csrf_token: planted, email, password: PASSWORD } });
  expect(res.status).toBe(403);
  issuedNothing(res);
});

it('a TOTP code already used is refused the second time', async () => {
  const owner = await verifiedAccount(app, PASSWORD, uniqueEmail('totp'));
  const browser = new Browser();
  const form = await browser.get(signInPath(authorizeParams(app).query));
  expect((await browser.submit(form.body, '/sign-in', { email: owner, password: PASSWORD })).status).toBe(302);
  const start = await browser.get(`/mfa/totp?${new URLSearchParams({ client_key: app.client_key })}`);
  const setup = await browser.submit(start.body, '/mfa/totp', {});
  const secret = setup.body.match(/<code id="totp-secret">([A-Z2-7]+)<\/code>/)![1];
  const confirmCode = totpCode(secret);
  expect((await browser.submit(setup.body, '/mfa/totp/confirm', { code: confirmCode })).status).toBe(200);

  const attacker = new Browser();
  const attackerForm = await attacker.get(signInPath(authorizeParams(app).query));
  const challenge = await attacker.submit(attackerForm.body, '/sign-in', { email: owner, password: PASSWORD });
  expect(challenge.status).toBe(200);
  const replayed = await attacker.submit(challenge.body, '/sign-in/totp', { code: confirmCode });
  expect(replayed.status).toBe(400);
  issuedNothing(replayed);
});

it('the TOTP step cannot be skipped by posting the sign-in form with a forged pending note', async () => {
  const browser = new Browser();
  const form = await browser.get(signInPath(authorizeParams(app).query));
  const fields = hiddenFields(form.body, '/sign-in');
  const res = await browser.request('/sign-in/totp', { form: { ...fields, pending: 'forged', code: '000000' } });
  expect(res.status).toBe(400);
  issuedNothing(res);
});
