import { totpCode } from '../../src/accounts/totp';
import { api, freshOrgToken } from '../support/api';
import { waitFor } from '../support/ports';
import {
  authorizeParams as authorizeParamsOf,
  Browser,
  closeBrowsers,
  endUserToken as endUserTokenOf,
  hiddenFields,
  loginUrl,
  mailsTo,
  type ProvisionedApp,
  provisionApp,
  signInPath,
  uniqueEmail,
  verifiedAccount as verifiedAccountOf,
  waitForLink,
} from '../support/accounts';

const PASSWORD = 'correct horse battery staple';

let app: ProvisionedApp;
beforeAll(async () => {
  app = await provisionApp();
});
afterAll(closeBrowsers);

/** The login session cookie of this suite's app (one per app). */
const loginCookie = () => `wes_login_${app.client_uuid}`;

const authorizeParams = (verifier?: string) => authorizeParamsOf(app, verifier);

const register = (email: string, password = PASSWORD, clientKey = app.client_key) =>
  api('/api/auth/end-user/register', { token: null, body: { client_key: clientKey, email, password } });

const verifiedAccount = (email?: string) => verifiedAccountOf(app, PASSWORD, email);

/** Opens the sign-in page as /authorize sends a browser to it and posts the form. */
async function signIn(browser: Browser, email: string, password: string, query = authorizeParams().query) {
  const form = await browser.get(signInPath(query));
  expect(form.status).toBe(200);
  return { form, answer: await browser.submit(form.body, '/sign-in', { email, password }) };
}

const endUserToken = (browser: Browser, email: string) => endUserTokenOf(app, browser, email, PASSWORD);

/** The links of a page that leave the login host: its ways back to the app. */
const linkToApp = (body: string) =>
  [...body.matchAll(/<a href="(https?:[^"]*)">/g)].map((m) => m[1].replace(/&amp;/g, '&')).filter((href) => !href.startsWith(loginUrl()));

describe('registration (JSON)', () => {
  it('creates an account, mails a verification link, and answers 409 for the same email in that app only', async () => {
    const email = uniqueEmail('json');
    const created = await register(email);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ end_user_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), email_verification: 'sent' });
    const [mail] = mailsTo(email);
    expect(mail.subject).toContain('Confirm your email');
    expect(mail.raw).toMatch(/^Message-ID: <.+>$/m);
    expect(mail.body).toContain(`${loginUrl()}/verify-email?token=`);

    const again = await register(email.toUpperCase(), 'another password');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('email_taken');
    const otherApp = await provisionApp();
    expect((await register(email, PASSWORD, otherApp.client_key)).status).toBe(201);
  });

  it('takes passwords of 8 to 256 characters with no composition rule, and names the field otherwise', async () => {
    for (const password of ['abcdefgh', 'a'.repeat(256), '🔑'.repeat(8)]) expect((await register(uniqueEmail('ok'), password)).status).toBe(201);
    for (const password of ['short', 'a'.repeat(257)]) {
      const email = uniqueEmail('bad');
      const res = await register(email, password);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'password' })]);
      expect((await register(email)).status).toBe(201);
    }
  });

  it('refuses an unknown app, a malformed email and unknown fields with 422 naming the field', async () => {
    const unknownApp = await register(uniqueEmail(), PASSWORD, 'ck_doesnotexist');
    expect(unknownApp.status).toBe(422);
    expect(unknownApp.body.error.details).toEqual([{ field: 'client_key', rule: 'known_app', message: 'must name a provisioned app' }]);
    const badEmail = await register('not-an-email');
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.error.details[0].field).toBe('email');
    const extra = await api('/api/auth/end-user/register', { token: null, body: { client_key: app.client_key, email: uniqueEmail(), password: PASSWORD, admin: true } });
    expect(extra.status).toBe(422);
  });
});

describe('email verification', () => {
  it('is required to sign in; the outbox link verifies once', async () => {
    const email = uniqueEmail('verify');
    await register(email);
    const browser = new Browser();
    const { answer: early } = await signIn(browser, email, PASSWORD);
    expect(early.status).toBe(403);
    expect(early.body).toContain('Confirm your email first');
    expect(early.location).toBeNull();
    expect(browser.cookies.has(loginCookie())).toBe(false);
    // Signing in unverified mails a fresh link: both work until one is used.
    await waitForLink(email, '/verify-email', 1);

    const link = await waitForLink(email, '/verify-email');
    const page = await browser.get(link.pathname + link.search);
    expect(page.status).toBe(200);
    const confirmed = await browser.submit(page.body, '/verify-email', {});
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toContain('Email confirmed');
    const reused = await api('/api/auth/end-user/verify-email', { token: null, body: { token: link.searchParams.get('token') } });
    expect(reused.status).toBe(422);
    expect(reused.body.error.details[0]).toMatchObject({ field: 'token', rule: 'valid_token' });

    const { answer } = await signIn(browser, email, PASSWORD);
    expect(answer.status).toBe(302);
  });
});

describe('registration and sign-in (pages)', () => {
  it('registers through the form, verifies through the mailed link and signs in to /authorize with a session cookie', async () => {
    const browser = new Browser();
    const { query } = authorizeParams();
    const email = uniqueEmail('page');
    const signInPage = await browser.get(signInPath(query));
    expect(signInPage.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(signInPage.headers.get('x-frame-options')).toBe('DENY');
    expect(signInPage.body).toContain('<label for="email">');
    expect(signInPage.body).not.toContain('<script');
    const registerLink = signInPage.body.match(/href="(\/register\?[^"]+)"/)![1].replace(/&amp;/g, '&');
    const form = await browser.get(registerLink);
    expect(form.status).toBe(200);
    const short = await browser.submit(form.body, '/register', { email, password: 'seven77' });
    expect(short.status).toBe(422);
    expect(short.body).toContain('The password must be at least 8 characters.');
    expect(mailsTo(email)).toEqual([]);
    const done = await browser.submit(form.body, '/register', { email, password: PASSWORD });
    expect(done.status).toBe(201);
    expect(done.body).toContain('Check your email');
    const taken = await browser.submit(form.body, '/register', { email, password: PASSWORD });
    expect(taken.status).toBe(409);

    // The mailed link carries the authorize parameters, so the person lands back in the same sign-in.
    const link = await waitForLink(email, '/verify-email');
    expect(link.searchParams.get('state')).toBe(query.state);
    const verifyPage = await browser.get(link.pathname + link.search);
    const verified = await browser.submit(verifyPage.body, '/verify-email', {});
    expect(verified.body).toContain('Email confirmed');
    const next = verified.body.match(/href="(\/sign-in\?[^"]+)"/)![1].replace(/&amp;/g, '&');

    const again = await browser.get(next);
    const fields = hiddenFields(again.body, '/sign-in');
    expect(fields).toMatchObject({ client_key: app.client_key, redirect_uri: app.redirect_uri, state: query.state, code_challenge: query.code_challenge });
    const answer = await browser.submit(again.body, '/sign-in', { email, password: PASSWORD });
    expect(answer.status).toBe(302);
    const location = new URL(answer.location!);
    expect(location.origin + location.pathname).toBe(`${loginUrl()}/authorize`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ client_key: app.client_key, redirect_uri: app.redirect_uri, state: query.state });
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith(`${loginCookie()}=`))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);

    const authorized = await browser.get(answer.location!);
    expect(authorized.status).toBe(302);
    const callback = new URL(authorized.location!);
    expect(callback.origin + callback.pathname).toBe(app.redirect_uri);
    expect(callback.searchParams.get('state')).toBe(query.state);
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it('answers a wrong password and an unregistered email with the same page', async () => {
    const email = await verifiedAccount();
    const browser = new Browser('127.0.0.4');
    const normalise = (body: string, typed: string) => body.replaceAll(typed, 'EMAIL').replace(/value="[\w-]{43}"/g, 'value="CSRF"');
    const { query } = authorizeParams();
    const wrong = await signIn(browser, email, 'not the password', query);
    const unknown = await signIn(browser, uniqueEmail('nobody'), 'not the password', query);
    expect(wrong.answer.status).toBe(400);
    expect(unknown.answer.status).toBe(400);
    expect(normalise(wrong.answer.body, email)).toBe(normalise(unknown.answer.body, unknown.answer.body.match(/value="([^"]+@example\.com)"/)![1]));
  });

  it('lets the user cancel sign-in: back to the redirect URI with access_denied, state and iss (RFC 6749 §4.1.2.1, RFC 9207)', async () => {
    const { query } = authorizeParams();
    const page = await new Browser().get(signInPath(query));
    const [cancel] = linkToApp(page.body);
    const back = new URL(cancel);
    expect(back.origin + back.pathname).toBe(app.redirect_uri);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', error_description: expect.any(String), state: query.state, iss: loginUrl() });

    // A sign-in link naming a redirect_uri the app did not register offers no way there.
    const stray = await new Browser().get(signInPath({ ...query, redirect_uri: 'https://evil.example.test/cb' }));
    expect(stray.status).toBe(200);
    expect(linkToApp(stray.body)).toEqual([]);
    expect(stray.body).not.toContain('href="https://evil.example.test');
  });

  it("answers /authorize's unregistered redirect_uri with a way back to one the app registered, never to the one given", async () => {
    const { query } = authorizeParams();
    const given = `${new URL(app.redirect_uri).origin}/not-registered`;
    const res = await new Browser().get(`/authorize?${new URLSearchParams({ ...query, redirect_uri: given })}`);
    expect(res.status).toBe(400);
    expect(res.body).toContain('Invalid redirect');
    expect(linkToApp(res.body)).toEqual([app.redirect_uri]);
  });

  it('shows an error page for an unknown app, and never a form', async () => {
    for (const clientKey of ['ck_nope', 'ck_%00', '%F0%9F']) {
      const res = await new Browser().get(`/sign-in?client_key=${clientKey}&redirect_uri=https%3A%2F%2Fevil.example%2F`);
      expect(res.status).toBe(400);
      expect(res.body).not.toContain('<form');
    }
    const register = await api('/api/auth/end-user/register', { token: null, body: { client_key: 'ck_\u0000', email: uniqueEmail(), password: PASSWORD } });
    expect(register.status).toBe(422);
  });
});

describe('password reset', () => {
  it('mails one address at most ACCOUNT_MAILS_PER_EMAIL (5) links a window, its verification included, answering 202 all the same', async () => {
    const email = await verifiedAccount();
    const reset = (to: string) => api('/api/auth/end-user/password-reset', { token: null, body: { client_key: app.client_key, email: to } });
    for (let i = 0; i < 7; i++) expect((await reset(email)).status).toBe(202);
    await waitFor('5 mails', async () => (mailsTo(email).length >= 5 ? true : undefined), 20_000);
    // A later request for another address is mailed once the earlier ones were decided.
    const fence = await verifiedAccount();
    expect((await reset(fence)).status).toBe(202);
    await waitForLink(fence, '/reset-password');
    expect(mailsTo(email).map((m) => m.body.includes('/reset-password'))).toEqual([false, true, true, true, true]);
  });

  it('answers 202 alike for an existing and an unknown account, and mails only the existing one', async () => {
    const email = await verifiedAccount();
    const nobody = uniqueEmail('nobody');
    const known = await api('/api/auth/end-user/password-reset', { token: null, body: { client_key: app.client_key, email } });
    const unknown = await api('/api/auth/end-user/password-reset', { token: null, body: { client_key: app.client_key, email: nobody } });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    const link = await waitForLink(email, '/reset-password');
    expect(mailsTo(nobody)).toEqual([]);

    const weak = await api('/api/auth/end-user/password-reset/complete', { token: null, body: { token: link.searchParams.get('token'), password: 'short' } });
    expect(weak.status).toBe(422);
    const done = await api('/api/auth/end-user/password-reset/complete', {
      token: null,
      body: { token: link.searchParams.get('token'), password: 'a brand new passphrase' },
    });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ password_reset: 'completed' });
    const reused = await api('/api/auth/end-user/password-reset/complete', {
      token: null,
      body: { token: link.searchParams.get('token'), password: 'yet another passphrase' },
    });
    expect(reused.status).toBe(422);

    const browser = new Browser('127.0.0.5');
    expect((await signIn(browser, email, PASSWORD)).answer.status).toBe(400);
    expect((await signIn(browser, email, 'a brand new passphrase')).answer.status).toBe(302);
  });

  it('works through the forgot and reset pages, and signs the account out everywhere', async () => {
    const email = await verifiedAccount();
    const browser = new Browser();
    const { query } = authorizeParams();
    expect((await signIn(browser, email, PASSWORD, query)).answer.status).toBe(302);
    const session = browser.cookies.get(loginCookie())!;

    const forgot = await browser.get(`/forgot-password?${new URLSearchParams({ client_key: app.client_key })}`);
    const sent = await browser.submit(forgot.body, '/forgot-password', { email });
    const sentNobody = await browser.submit(forgot.body, '/forgot-password', { email: uniqueEmail('nobody') });
    expect(sent.status).toBe(200);
    expect(sentNobody.status).toBe(200);
    expect(sentNobody.body).toBe(sent.body);

    const link = await waitForLink(email, '/reset-password');
    const resetForm = await browser.get(link.pathname + link.search);
    expect(resetForm.headers.get('referrer-policy')).toBe('no-referrer');
    const done = await browser.submit(resetForm.body, '/reset-password', { password: 'the reset passphrase' });
    expect(done.status).toBe(200);
    expect(done.body).toContain('Password changed');

    // The old session no longer satisfies /authorize: it asks for a sign-in again.
    const stale = new Browser();
    stale.cookies.set(loginCookie(), session);
    const authorize = await stale.get(`/authorize?${new URLSearchParams({ ...query, client_key: app.client_key })}`);
    expect(authorize.location ?? '').not.toContain('code=');
  });
});

describe('TOTP', () => {
  it('enrols through the JSON routes with an end-user token, then signs in only with a current code', async () => {
    const email = await verifiedAccount();
    const browser = new Browser();
    const token = await endUserToken(browser, email);

    const orgMember = await api('/api/auth/end-user/mfa/totp', { method: 'POST', body: { password: PASSWORD } });
    expect(orgMember.status).toBe(403);
    const enrol = await api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } });
    expect(enrol.status).toBe(200);
    expect(enrol.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(new URL(enrol.body.otpauth_uri).searchParams.get('secret')).toBe(enrol.body.secret);
    const wrong = await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: totpCode(enrol.body.secret, Date.now() - 10 * 60_000) } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details[0].field).toBe('code');
    const confirmed = await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: totpCode(enrol.body.secret) } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ totp: 'enabled' });
    expect((await api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } })).status).toBe(409);

    const fresh = new Browser();
    const { answer: challenge } = await signIn(fresh, email, PASSWORD);
    expect(challenge.status).toBe(200);
    expect(challenge.body).toContain('autocomplete="one-time-code"');
    expect(fresh.cookies.has(loginCookie())).toBe(false);
    const badCode = await fresh.submit(challenge.body, '/sign-in/totp', { code: totpCode(enrol.body.secret, Date.now() - 10 * 60_000) });
    expect(badCode.status).toBe(400);
    expect(fresh.cookies.has(loginCookie())).toBe(false);
    // The next step's code: the current one may be the one the confirmation used, and none is accepted twice.
    const code = totpCode(enrol.body.secret, Date.now() + 30_000);
    const signedIn = await fresh.submit(badCode.body, '/sign-in/totp', { code });
    expect(signedIn.status).toBe(302);
    expect(signedIn.location).toContain('/authorize?');
    expect(fresh.cookies.has(loginCookie())).toBe(true);
    const replay = new Browser();
    const { answer: secondChallenge } = await signIn(replay, email, PASSWORD);
    const replayed = await replay.submit(secondChallenge.body, '/sign-in/totp', { code });
    expect(replayed.status).toBe(400);
    expect(replay.cookies.has(loginCookie())).toBe(false);

  });

  it('turns TOTP off through the JSON route only with a code not used before', async () => {
    const email = await verifiedAccount();
    const token = await endUserToken(new Browser(), email);
    const enrol = await api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } });
    const used = totpCode(enrol.body.secret);
    expect((await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: used } })).status).toBe(200);
    const bare = await api('/api/auth/end-user/mfa/totp', { method: 'DELETE', token });
    expect(bare.status).toBe(422);
    expect(bare.body.error.details[0]).toMatchObject({ field: 'code', rule: 'current_code' });
    expect((await api('/api/auth/end-user/mfa/totp', { method: 'DELETE', token, body: { code: used } })).status).toBe(422);
    expect((await signIn(new Browser(), email, PASSWORD)).answer.status).toBe(200);
    const next = totpCode(enrol.body.secret, Date.now() + 30_000);
    expect((await api('/api/auth/end-user/mfa/totp', { method: 'DELETE', token, body: { code: next } })).status).toBe(204);
    expect((await signIn(new Browser(), email, PASSWORD)).answer.status).toBe(302);
  });

  it('enrols through the pages with the login session', async () => {
    const email = await verifiedAccount();
    const browser = new Browser();
    expect((await signIn(browser, email, PASSWORD)).answer.status).toBe(302);
    const mfaPath = `/mfa/totp?${new URLSearchParams({ client_key: app.client_key })}`;
    // Without a session: where to sign in, the app (which holds the PKCE verifier).
    const signedOut = await new Browser().get(mfaPath);
    expect(signedOut.status).toBe(401);
    expect(linkToApp(signedOut.body)).toEqual([app.redirect_uri]);
    const start = await browser.get(mfaPath);
    expect(start.status).toBe(200);
    expect(linkToApp(start.body)).toEqual([app.redirect_uri]);
    const setup = await browser.submit(start.body, '/mfa/totp', { password: PASSWORD });
    const secret = setup.body.match(/<code id="totp-secret">([A-Z2-7]+)<\/code>/)![1];
    const wrong = await browser.submit(setup.body, '/mfa/totp/confirm', { code: totpCode(secret, Date.now() - 10 * 60_000) });
    expect(wrong.status).toBe(422);
    expect(wrong.body).not.toContain(secret);
    expect(wrong.body).toContain('start again with your password');
    const on = await browser.submit(wrong.body, '/mfa/totp/confirm', { code: totpCode(secret) });
    expect(on.status).toBe(200);
    expect(on.body).toContain('Two-step verification is on');
    expect(linkToApp(on.body)).toEqual([app.redirect_uri]);

    const { query } = authorizeParams();
    const { answer } = await signIn(new Browser(), email, PASSWORD, query);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('action="/sign-in/totp"');
    // The second step can be cancelled as the first.
    expect(linkToApp(answer.body).map((href) => Object.fromEntries(new URL(href).searchParams))).toEqual([
      { error: 'access_denied', error_description: expect.any(String), state: query.state, iss: loginUrl() },
    ]);

    const noCode = await browser.submit(on.body, '/mfa/totp/remove', { code: totpCode(secret, Date.now() - 10 * 60_000) });
    expect(noCode.status).toBe(422);
    expect(noCode.body).toContain('Two-step verification is on');
    const off = await browser.submit(noCode.body, '/mfa/totp/remove', { code: totpCode(secret, Date.now() + 30_000) });
    expect(off.status).toBe(200);
    expect((await signIn(new Browser(), email, PASSWORD)).answer.status).toBe(302);
  });

  it('an org member turns TOTP off for an end user of their app (the way back from a lost or foreign authenticator)', async () => {
    const email = await verifiedAccount();
    const token = await endUserToken(new Browser(), email);
    const enrol = await api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } });
    expect((await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: totpCode(enrol.body.secret) } })).status).toBe(200);
    const endUserUuid = (await api('/api/auth/me', { token })).body.user_id as string;
    const path = (client = app.client_uuid, endUser = endUserUuid) => `/api/apps/${client}/end-users/${endUser}/mfa/totp`;

    expect((await api(path(), { method: 'DELETE', token })).status).toBe(403);
    const otherOrg = await api(path(), { method: 'DELETE', token: freshOrgToken('totp-reset') });
    expect(otherOrg.status).toBe(404);
    const otherApp = await provisionApp();
    expect((await api(path(otherApp.client_uuid), { method: 'DELETE' })).status).toBe(404);
    expect((await api(path(app.client_uuid, 'not-a-uuid'), { method: 'DELETE' })).status).toBe(404);
    expect((await signIn(new Browser(), email, PASSWORD)).answer.status).toBe(200);

    expect((await api(path(app.client_uuid, endUserUuid.toUpperCase()), { method: 'DELETE' })).status).toBe(204);
    expect((await signIn(new Browser(), email, PASSWORD)).answer.status).toBe(302);
  });

  it('drops an enrolment that was never confirmed without a code', async () => {
    const email = await verifiedAccount();
    const token = await endUserToken(new Browser(), email);
    expect((await api('/api/auth/end-user/mfa/totp', { method: 'POST', token, body: { password: PASSWORD } })).status).toBe(200);
    expect((await api('/api/auth/end-user/mfa/totp', { method: 'DELETE', token })).status).toBe(204);
    expect((await api('/api/auth/end-user/mfa/totp/confirm', { token, body: { code: '123456' } })).status).toBe(409);
  });
});

describe('sign-in throttling', () => {
  it('locks an account after 10 failures, the right password included, and an unregistered email alike', async () => {
    const email = await verifiedAccount();
    const nobody = uniqueEmail('nobody');
    const browser = new Browser('127.0.0.6');
    for (let i = 0; i < 10; i++) {
      expect((await signIn(browser, email, `wrong password ${i}`)).answer.status).toBe(400);
      expect((await signIn(browser, nobody, `wrong password ${i}`)).answer.status).toBe(400);
    }
    const locked = await signIn(browser, email, PASSWORD);
    expect(locked.answer.status).toBe(429);
    expect(Number(locked.answer.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(locked.answer.body).toContain('try again in 15 minutes');
    expect(browser.cookies.has(loginCookie())).toBe(false);
    const lockedNobody = await signIn(browser, nobody, PASSWORD);
    expect(lockedNobody.answer.status).toBe(429);
    expect(lockedNobody.answer.body).toBe(locked.answer.body);
    // Another account from the same address is not locked.
    expect((await signIn(browser, await verifiedAccount(), PASSWORD)).answer.status).toBe(302);
  });

  it('checks at most 10 passwords of a concurrent burst against one account', async () => {
    const email = await verifiedAccount();
    const attacker = new Browser('127.0.0.9');
    const form = await attacker.get(signInPath(authorizeParams().query));
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => attacker.submit(form.body, '/sign-in', { email, password: `guess ${i} 123456` })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 400)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    expect((await signIn(new Browser('127.0.0.10'), email, PASSWORD)).answer.status).toBe(429);
  });

  it('locks a client address after 50 failures across accounts', async () => {
    const email = await verifiedAccount();
    const attacker = new Browser('127.0.0.7');
    const form = await attacker.get(signInPath(authorizeParams().query));
    for (let batch = 0; batch < 5; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => attacker.submit(form.body, '/sign-in', { email: uniqueEmail(`spray${batch}${i}`), password: 'guess 123456' })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(400));
    }
    const locked = await attacker.submit(form.body, '/sign-in', { email, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    const elsewhere = new Browser('127.0.0.8');
    expect((await signIn(elsewhere, email, PASSWORD)).answer.status).toBe(302);
  });
});
