import { Agent, fetch } from 'undici';
import { totpCode } from '../../src/accounts/totp';
import { api, stackEnv } from '../support/api';
import {
  authorizeParams,
  Browser,
  closeBrowsers,
  endUserToken,
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
  expect(res.headers.getSetCookie().some((c) => c.startsWith('wes_login'))).toBe(false);
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
  const setup = await browser.submit(start.body, '/mfa/totp', { password: PASSWORD });
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

describe('TOTP codes outside sign-in count under the sign-in lock (10 per account)', () => {
  const secretOn = (page: string) => page.match(/<code id="totp-secret">([A-Z2-7]+)<\/code>/)![1];
  /** Six digits that are no code of the secret now: codes of long ago. */
  const wrongCodes = (secret: string, n: number) => Array.from({ length: n }, (_, i) => totpCode(secret, Date.now() - 3_600_000 - i * 30_000));
  const mfaPath = () => `/mfa/totp?${new URLSearchParams({ client_key: app.client_key })}`;

  /** An account with TOTP on, signed in through `browser`, and its end-user token. */
  async function withTotp(browser: Browser) {
    const owner = await verifiedAccount(app, PASSWORD, uniqueEmail('totp-lock'));
    const token = await endUserToken(app, browser, owner, PASSWORD);
    const start = await browser.get(mfaPath());
    const setup = await browser.submit(start.body, '/mfa/totp', { password: PASSWORD });
    const secret = secretOn(setup.body);
    expect((await browser.submit(setup.body, '/mfa/totp/confirm', { code: totpCode(secret) })).status).toBe(200);
    return { token, secret };
  }

  const agents: Agent[] = [];
  afterAll(() => Promise.all(agents.map((a) => a.close())));

  /** JSON calls from their own client address, so that the address's lock (50) is not what stops them. */
  function apiFrom(localAddress: string) {
    const dispatcher = new Agent({ localAddress });
    agents.push(dispatcher);
    return async (method: string, path: string, token: string, body: unknown) => {
      const res = await fetch(stackEnv.apiUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher,
      });
      await res.text();
      return { status: res.status, retryAfter: res.headers.get('retry-after') };
    };
  }

  it('DELETE mfa/totp: a burst of wrong codes gets 10 checked, and the right code is refused while the lock lasts', async () => {
    const browser = new Browser('127.0.0.21');
    const { token, secret } = await withTotp(browser);
    const call = apiFrom('127.0.0.22');
    const answers = await Promise.all(wrongCodes(secret, 30).map((code) => call('DELETE', '/api/auth/end-user/mfa/totp', token, { code })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const right = await call('DELETE', '/api/auth/end-user/mfa/totp', token, { code: totpCode(secret, Date.now() + 30_000) });
    expect(right.status).toBe(429);
    expect(Number(right.retryAfter)).toBeGreaterThan(800);
    expect((await browser.get(mfaPath())).body).toContain('Two-step verification is on');
  });

  it('POST mfa/totp/remove (login session): a burst of wrong codes gets 10 checked, and the right code is refused while the lock lasts', async () => {
    const browser = new Browser('127.0.0.23');
    const { secret } = await withTotp(browser);
    const page = await browser.get(mfaPath());
    const answers = await Promise.all(wrongCodes(secret, 30).map((code) => browser.submit(page.body, '/mfa/totp/remove', { code })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const right = await browser.submit(page.body, '/mfa/totp/remove', { code: totpCode(secret, Date.now() + 30_000) });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(right.body).toContain('try again in 15 minutes');
    expect((await browser.get(mfaPath())).body).toContain('Two-step verification is on');
  });

  it('mfa/totp/confirm: a burst of wrong codes gets 10 checked, and the right code is refused while the lock lasts', async () => {
    const owner = await verifiedAccount(app, PASSWORD, uniqueEmail('totp-confirm-lock'));
    const browser = new Browser('127.0.0.24');
    const token = await endUserToken(app, browser, owner, PASSWORD);
    const setup = await browser.submit((await browser.get(mfaPath())).body, '/mfa/totp', { password: PASSWORD });
    const secret = secretOn(setup.body);
    const call = apiFrom('127.0.0.25');
    const answers = await Promise.all(wrongCodes(secret, 30).map((code) => call('POST', '/api/auth/end-user/mfa/totp/confirm', token, { code })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const right = await call('POST', '/api/auth/end-user/mfa/totp/confirm', token, { code: totpCode(secret) });
    expect(right.status).toBe(429);
    expect((await browser.submit(setup.body, '/mfa/totp/confirm', { code: totpCode(secret) })).status).toBe(429);
    expect((await browser.get(mfaPath())).body).not.toContain('Two-step verification is on');
  });
});

describe('a stolen end-user token or login session cannot turn TOTP on without the password', () => {
  const mfaPath = () => `/mfa/totp?${new URLSearchParams({ client_key: app.client_key })}`;
  const agents: Agent[] = [];
  afterAll(() => Promise.all(agents.map((a) => a.close())));

  it('POST mfa/totp: no secret without the current password, and wrong passwords count toward the sign-in lock', async () => {
    const owner = await verifiedAccount(app, PASSWORD, uniqueEmail('totp-thief'));
    const token = await endUserToken(app, new Browser('127.0.0.26'), owner, PASSWORD);
    const dispatcher = new Agent({ localAddress: '127.0.0.27' });
    agents.push(dispatcher);
    const enrol = async (body: unknown) => {
      const res = await fetch(`${stackEnv.apiUrl}/api/auth/end-user/mfa/totp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const bare = await enrol({});
    expect(bare.status).toBe(422);
    expect(bare.body.error.details[0].field).toBe('password');
    const wrong = await enrol({ password: 'the thief guesses' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ field: 'password', rule: 'current_password' })]);
    expect(JSON.stringify(wrong.body)).not.toContain('secret');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => enrol({ password: `guess number ${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 422)).toHaveLength(9);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);
    expect((await enrol({ password: PASSWORD })).status).toBe(429);
    const confirm = await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: '123456' } });
    expect(confirm.body.error.code).toBe('totp_not_started');
  });

  it('POST /mfa/totp (login session): no secret without the current password', async () => {
    const owner = await verifiedAccount(app, PASSWORD, uniqueEmail('totp-cookie-thief'));
    const browser = new Browser('127.0.0.28');
    await endUserToken(app, browser, owner, PASSWORD);
    const page = await browser.get(mfaPath());
    const refused = await browser.submit(page.body, '/mfa/totp', { password: 'the thief guesses' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('That password is not right.');
    expect(refused.body).not.toContain('totp-secret');
    const noPassword = await browser.submit(page.body, '/mfa/totp', {});
    expect(noPassword.status).toBe(422);
    expect(noPassword.body).not.toContain('totp-secret');
    const allowed = await browser.submit(page.body, '/mfa/totp', { password: PASSWORD });
    expect(allowed.body).toContain('totp-secret');
    // While the owner's enrolment waits for its code, a made-up code does not show the pending key.
    const guessed = await browser.submit(allowed.body, '/mfa/totp/confirm', { code: '000000' });
    expect(guessed.status).toBe(422);
    expect(guessed.body).not.toContain('totp-secret');
    expect(guessed.body).not.toContain(allowed.body.match(/<code id="totp-secret">([A-Z2-7]+)<\/code>/)![1]);
  });
});
