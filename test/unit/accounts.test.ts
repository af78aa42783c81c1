import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { registerBody } from '../../src/accounts/account-schemas';
import { pickAuthorizeParams } from '../../src/accounts/authorize-params';
import { Csrf } from '../../src/accounts/csrf';
import { createMailer } from '../../src/accounts/mailer';
import { signInPage } from '../../src/accounts/pages/views';
import { hashPassword, passwordSchema, verifyAgainstDecoy, verifyPassword } from '../../src/accounts/passwords';
import { accountKey, clientKey, KeyedLimiter, type SignInAttempt, SignInThrottle } from '../../src/accounts/throttle';
import { TotpChallenge } from '../../src/accounts/totp-challenge';
import { startSmtpDouble } from '../doubles/smtp-double';
import { newTotpSecret, otpauthUri, totpCode, totpStep } from '../../src/accounts/totp';
import { openMigratedPglite } from '../support/pglite';

describe('passwords', () => {
  it('hashes with scrypt and a fresh salt, and verifies only the same password', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false);
    expect(await verifyPassword('x', 'not-a-hash')).toBe(false);
    expect(await verifyAgainstDecoy('anything')).toBe(false);
  });

  it('treats composed and decomposed forms of one password as the same', async () => {
    const hash = await hashPassword('caf\u00e9-au-lait');
    expect(await verifyPassword('cafe\u0301-au-lait', hash)).toBe(true);
  });

  it('takes 8 to 256 characters and imposes no composition rule', () => {
    expect(passwordSchema.safeParse('aaaaaaaa').success).toBe(true);
    expect(passwordSchema.safeParse('a'.repeat(256)).success).toBe(true);
    expect(passwordSchema.safeParse('😀'.repeat(8)).success).toBe(true);
    expect(passwordSchema.safeParse('a'.repeat(7)).success).toBe(false);
    expect(passwordSchema.safeParse('a'.repeat(257)).success).toBe(false);
  });

  it('lower-cases the email of a registration', () => {
    const parsed = registerBody.parse({ client_key: 'ck_x', email: ' Ada@Example.COM ', password: 'long enough' });
    expect(parsed.email).toBe('ada@example.com');
    expect(registerBody.safeParse({ client_key: 'ck_x', email: 'not-an-email', password: 'long enough' }).success).toBe(false);
  });
});

describe('CSRF (signed double-submit cookie)', () => {
  const csrf = new Csrf(randomBytes(32), false);

  it('accepts the field issued for the cookie and nothing else', () => {
    const { token, setCookie } = csrf.issue(undefined);
    expect(setCookie).toMatch(/^wfe_csrf=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    const cookie = setCookie!.split(';')[0];
    expect(csrf.verify(cookie, token)).toBe(true);
    expect(csrf.issue(cookie)).toEqual({ token });
    expect(csrf.verify(cookie, undefined)).toBe(false);
    expect(csrf.verify(undefined, token)).toBe(false);
    expect(csrf.verify(cookie, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))).toBe(false);
  });

  it('refuses a planted cookie whose field was not signed by this server', () => {
    const other = new Csrf(randomBytes(32), false);
    const { token, setCookie } = other.issue(undefined);
    expect(csrf.verify(setCookie!.split(';')[0], token)).toBe(false);
    const planted = 'wfe_csrf=' + 'A'.repeat(43);
    expect(csrf.verify(planted, 'A'.repeat(43))).toBe(false);
  });

  it('uses a __Host- Secure cookie on https', () => {
    expect(new Csrf(randomBytes(32), true).issue(undefined).setCookie).toMatch(/^__Host-wfe_csrf=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
  });
});

describe('TOTP (RFC 6238)', () => {
  // RFC 6238 Appendix B, SHA-1 seed "12345678901234567890", the last 6 of its 8-digit values.
  const rfcSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

  it('matches the RFC test vectors', () => {
    expect(totpCode(rfcSecret, 59_000)).toBe('287082');
    expect(totpCode(rfcSecret, 1_111_111_109_000)).toBe('081804');
    expect(totpCode(rfcSecret, 1_234_567_890_000)).toBe('005924');
  });

  it('accepts the current code and one step of drift, nothing older or malformed', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const now = 1_700_000_000_000;
    const step = Math.floor(now / 30_000);
    expect(totpStep(secret, totpCode(secret, now), now)).toBe(step);
    expect(totpStep(secret, totpCode(secret, now - 30_000), now)).toBe(step - 1);
    expect(totpStep(secret, totpCode(secret, now + 30_000), now)).toBe(step + 1);
    expect(totpStep(secret, totpCode(secret, now - 90_000), now)).toBeUndefined();
    expect(totpStep(secret, 123456, now)).toBeUndefined();
    expect(totpStep(secret, '12345', now)).toBeUndefined();
  });

  it('builds an otpauth URI an authenticator app reads', () => {
    const uri = new URL(otpauthUri(rfcSecret, 'Acme App', 'ada@example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(rfcSecret);
    expect(uri.searchParams.get('issuer')).toBe('Acme App');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');
    expect(uri.searchParams.get('algorithm')).toBe('SHA1');
  });

  it('seals the password-accepted note between the two sign-in steps, for five minutes', () => {
    const challenge = new TotpChallenge(SecretBox.derive(randomBytes(32), 'login-flow'));
    const note = challenge.issue({ end_user_uuid: 'b6c0a1de-5e11-4c71-9d0e-6d1f0f3c2a10', client_uuid: 'c1' }, 1_000);
    // Long enough that the ciphertext's base64 cannot hold it by chance (a 2-letter id appears in about 1 note in 40).
    expect(note).not.toContain('b6c0a1de-5e11-4c71-9d0e-6d1f0f3c2a10');
    expect(challenge.open(note, 2_000)).toEqual({ end_user_uuid: 'b6c0a1de-5e11-4c71-9d0e-6d1f0f3c2a10', client_uuid: 'c1' });
    expect(challenge.open(note, 1_000 + 5 * 60_000)).toBeUndefined();
    const tampered = Buffer.from(note, 'base64url');
    tampered[tampered.length - 1] ^= 1;
    expect(challenge.open(tampered.toString('base64url'), 2_000)).toBeUndefined();
    expect(new TotpChallenge(SecretBox.derive(randomBytes(32), 'login-flow')).open(note, 2_000)).toBeUndefined();
  });
});

describe('mailer outbox', () => {
  it('writes one RFC 5322 message per mail, readable by the owner only', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-')), 'outbox');
    const mailer = createMailer({ from: 'Engine <no-reply@localhost>', outboxDir: dir });
    await mailer.send({ to: 'ada@example.com', subject: 'Confirm', text: 'Open http://127.0.0.1:1/verify-email?token=abc\n' });
    const [file] = fs.readdirSync(dir);
    expect(file).toMatch(/\.eml$/);
    expect(fs.statSync(path.join(dir, file)).mode & 0o777).toBe(0o600);
    const message = fs.readFileSync(path.join(dir, file), 'utf8');
    expect(message).toMatch(/^From: Engine <no-reply@localhost>$/m);
    expect(message).toMatch(/^To: ada@example.com$/m);
    expect(message).toMatch(/^Subject: Confirm$/m);
    expect(message).toMatch(/^Message-ID: <.+>$/m);
    expect(message).toMatch(/^Date: .+$/m);
    expect(message).toContain('verify-email?token=abc');
  });
});

describe('mailer over SMTP', () => {
  it('sends to the SMTP_URL server, authenticating with the URL\'s credentials', async () => {
    const smtp = await startSmtpDouble();
    try {
      const mailer = createMailer({ smtpUrl: `smtp://mailer:s3cret@127.0.0.1:${smtp.port}`, from: 'Engine <no-reply@localhost>', outboxDir: '/nonexistent' });
      await mailer.send({ to: 'ada@example.com', subject: 'Reset', text: 'Open http://127.0.0.1:1/reset-password?token=xyz\n' });
      expect(smtp.mails).toHaveLength(1);
      const [mail] = smtp.mails;
      expect(mail.auth).toEqual({ user: 'mailer', pass: 's3cret' });
      expect(mail.from).toBe('no-reply@localhost');
      expect(mail.to).toEqual(['ada@example.com']);
      expect(mail.data).toMatch(/^Subject: Reset\r$/m);
      expect(mail.data).toContain('reset-password?token=xyz');
      expect(fs.existsSync('/nonexistent')).toBe(false);
    } finally {
      await smtp.close();
    }
  });
});

describe('hosted pages', () => {
  it('escapes every value and labels every input', () => {
    const page = signInPage({
      appName: '<script>alert(1)</script>',
      csrf: 't"k',
      params: pickAuthorizeParams({ client_id: 'ck_1', state: '"><img src=x>', extra: 'dropped' }),
      email: 'a@b.c',
    });
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;script&gt;');
    expect(page).toContain('value="&quot;&gt;&lt;img src=x&gt;"');
    expect(page).toContain('<input type="hidden" name="client_key" value="ck_1">');
    expect(page).not.toContain('extra');
    expect(page).toContain('<input type="hidden" name="csrf_token" value="t&quot;k">');
    for (const id of ['email', 'password']) expect(page).toContain(`<label for="${id}">`);
    expect(page).toMatch(/<html lang="en">/);
  });
});

describe('sign-in throttle and the account limits (KeyedLimiter)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  /** Seconds until the lock that refused the attempt ends; 0 for one let through to be checked. */
  const wait = (a: SignInAttempt) => (a.refused ? a.retryAfter : 0);
  const waits = (attempts: SignInAttempt[]) => attempts.map(wait);
  const checked = (a: SignInAttempt) => {
    if (a.refused) throw new Error(`refused for ${a.retryAfter} s`);
    return a;
  };

  it('locks a key after its maximum failures in the window, for the lock time, however often it is tried meanwhile', async () => {
    const throttle = new SignInThrottle(database.db, { maxFailuresPerAccount: 3, maxFailuresPerClient: 5, lockSeconds: 60 });
    const account = accountKey('app-1', 'ada@example.com');
    const client = clientKey('10.0.0.1');
    const t0 = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    for (let i = 0; i < 3; i++) expect(wait(await throttle.attempt(account, client, t0))).toBe(0);
    expect(wait(await throttle.attempt(account, client, t0))).toBe(60);
    expect(wait(await throttle.attempt(account, client, at(45)))).toBe(15);
    // The refused attempts were counted nowhere: the address has 3 of its 5.
    expect(wait(await throttle.attempt(accountKey('app-1', 'bob@example.com'), client, at(50)))).toBe(0);
    expect(wait(await throttle.attempt(account, client, at(60)))).toBe(0);
  });

  it('locks the client address across accounts, and a success clears only its account', async () => {
    const throttle = new SignInThrottle(database.db, { maxFailuresPerAccount: 3, maxFailuresPerClient: 4, lockSeconds: 60 });
    const client = clientKey('10.0.0.2');
    const t0 = new Date('2026-01-01T00:00:00Z');
    for (const who of ['a', 'b', 'c']) await throttle.attempt(accountKey('app-1', who), client, t0);
    const right = await throttle.attempt(accountKey('app-1', 'a'), client, t0);
    expect(wait(right)).toBe(0);
    await checked(right).signedIn();
    expect(wait(await throttle.attempt(accountKey('app-1', 'd'), client, t0))).toBe(0);
    expect(wait(await throttle.attempt(accountKey('app-1', 'e'), client, t0))).toBe(60);
    // a's count was cleared: three attempts of its own again before its lock, had the address allowed them.
    const fresh = new SignInThrottle(database.db, { maxFailuresPerAccount: 3, maxFailuresPerClient: 4, lockSeconds: 60 });
    expect(waits(await Promise.all([1, 2, 3].map((i) => fresh.attempt(accountKey('app-1', 'a'), clientKey(`10.0.1.${i}`), t0))))).toEqual([0, 0, 0]);
  });

  it('starts a new window once the old one has passed', async () => {
    const throttle = new SignInThrottle(database.db, { maxFailuresPerAccount: 2, maxFailuresPerClient: 100, lockSeconds: 60 });
    const account = accountKey('app-2', 'ada@example.com');
    const t0 = new Date('2026-01-01T00:00:00Z');
    await throttle.attempt(account, clientKey('10.0.0.3'), t0);
    const later = new Date(t0.getTime() + 61_000);
    expect(wait(await throttle.attempt(account, clientKey('10.0.0.3'), later))).toBe(0);
    expect(wait(await throttle.attempt(account, clientKey('10.0.0.3'), later))).toBe(0);
    expect(wait(await throttle.attempt(account, clientKey('10.0.0.3'), later))).toBe(60);
  });

  it('lets only the maximum of a concurrent burst be checked, counting each before its check', async () => {
    const throttle = new SignInThrottle(database.db, { maxFailuresPerAccount: 5, maxFailuresPerClient: 100, lockSeconds: 60 });
    const burst = await Promise.all(Array.from({ length: 20 }, () => throttle.attempt(accountKey('app-3', 'ada@example.com'), clientKey('10.0.0.4'))));
    expect(waits(burst).filter((w) => w === 0)).toHaveLength(5);
    expect(waits(burst).filter((w) => w >= 59)).toHaveLength(15);
  });

  it('takes back an attempt that was right, and the lock its count had set', async () => {
    const throttle = new SignInThrottle(database.db, { maxFailuresPerAccount: 3, maxFailuresPerClient: 100, lockSeconds: 60 });
    const account = accountKey('app-4', 'ada@example.com');
    const client = clientKey('10.0.0.5');
    const t0 = new Date('2026-01-01T00:00:00Z');
    await throttle.attempt(account, client, t0);
    await throttle.attempt(account, client, t0);
    const third = await throttle.attempt(account, client, t0);
    expect(wait(third)).toBe(0);
    // While the third is checked its key is locked: it is the last one the window allows.
    expect(wait(await throttle.attempt(account, client, t0))).toBe(60);
    await checked(third).passed();
    expect(wait(await throttle.attempt(account, client, t0))).toBe(0);
    expect(wait(await throttle.attempt(account, client, t0))).toBe(60);
  });

  it('takes max events a window per key, then refuses until its window has passed', async () => {
    const limiter = new KeyedLimiter(database.db, 60);
    const t0 = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    expect(await limiter.take('mail:a', 3, at(0))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(1))).toBe(0);
    expect(await limiter.take('mail:b', 3, at(1))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(2))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(3))).toBe(57);
    expect(await limiter.take('mail:b', 3, at(3))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(61))).toBe(0);
  });

  it('lets exactly max of many concurrent takes through', async () => {
    const limiter = new KeyedLimiter(database.db, 60);
    const waits = await Promise.all(Array.from({ length: 12 }, () => limiter.take('register:concurrent', 5)));
    expect(waits.filter((w) => w === 0)).toHaveLength(5);
  });
});
