import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { deriveKey, SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { endUsers } from '../../db/schema';
import { invalidToken } from '../auth/bearer-challenge';
import { CONFIG, DATABASE, LOGGER, MASTER_KEY } from '../common/di';
import { loggableError } from '../common/loggable-error';
import type { AppConfig } from '../config';
import { appByClientKey, type IdentityApp } from '../identity/apps';
import { createLoginSession, currentLoginSession, LoginSessionCookie, revokeLoginSession } from '../identity/login-sessions';
import type { Logger } from '../logger';
import type { AuthorizeParams } from './authorize-params';
import { Csrf } from './csrf';
import { EmailTokens } from './email-tokens';
import type { EndUserPrincipal } from './end-user';
import { createMailer, type Mailer } from './mailer';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords';
import { accountKey, clientKey, KeyedLimiter, mailKey, registrationKey, SignInThrottle } from './throttle';
import { TotpChallenge } from './totp-challenge';
import { TotpEnrolment } from './totp-enrolment';

export type App = IdentityApp;
export type EndUser = typeof endUsers.$inferSelect;

export type SignInOutcome =
  | { outcome: 'locked'; retry_after: number }
  | { outcome: 'invalid' }
  | { outcome: 'unverified' }
  | { outcome: 'second_factor'; user: EndUser }
  | { outcome: 'signed_in'; user: EndUser };

/** End-user accounts: registration, email links, passwords, TOTP and sign-in throttling, for the pages and the JSON routes. */
@Injectable()
export class AccountsService {
  private readonly db;
  private readonly mailer: Mailer;
  private readonly tokens: EmailTokens;
  private readonly throttle: SignInThrottle;
  /** Account mail per address and registrations per client: what one sender may make this service do. */
  private readonly accountLimits: KeyedLimiter;
  readonly totp: TotpEnrolment;
  readonly challenge: TotpChallenge;
  readonly csrf: Csrf;
  private readonly sessionCookie: LoginSessionCookie;

  constructor(
    @Inject(DATABASE) database: DatabaseHandle,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(MASTER_KEY) masterKey: Buffer,
  ) {
    this.db = database.db;
    const accounts = config.accounts;
    this.mailer = createMailer({ smtpUrl: accounts.smtpUrl, from: accounts.mailFrom, outboxDir: accounts.outboxDir });
    this.tokens = new EmailTokens(this.db);
    this.throttle = new SignInThrottle(this.db, {
      maxFailuresPerAccount: accounts.signInMaxFailuresPerAccount,
      maxFailuresPerClient: accounts.signInMaxFailuresPerClient,
      lockSeconds: accounts.signInLockSeconds,
    });
    this.accountLimits = new KeyedLimiter(this.db, accounts.accountLimitWindowSeconds);
    this.totp = new TotpEnrolment(this.db, SecretBox.derive(masterKey, 'end-user-totp'), this.throttle);
    this.challenge = new TotpChallenge(SecretBox.derive(masterKey, 'login-flow'));
    this.csrf = new Csrf(deriveKey(masterKey, 'login-csrf'), new URL(config.identity.loginUrl).protocol === 'https:');
    this.sessionCookie = new LoginSessionCookie(config.identity.loginUrl);
  }

  get loginUrl() {
    return this.config.identity.loginUrl;
  }

  async findApp(key: unknown): Promise<App | undefined> {
    return typeof key === 'string' ? appByClientKey(this.db, key) : undefined;
  }

  async endUser(endUserUuid: string): Promise<EndUser | undefined> {
    const [user] = await this.db.select().from(endUsers).where(eq(endUsers.endUserUuid, endUserUuid));
    return user;
  }

  /** The account behind an end-user token (its session is live: the guard checked). */
  async requireEndUser(principal: EndUserPrincipal): Promise<EndUser> {
    const [user] = await this.db
      .select()
      .from(endUsers)
      .where(and(eq(endUsers.endUserUuid, principal.user_id), eq(endUsers.organizationUuid, principal.organization_uuid)));
    if (!user) throw invalidToken('the end user of this token no longer exists');
    return user;
  }

  private async byEmail(app: App, email: string): Promise<EndUser | undefined> {
    const [user] = await this.db
      .select()
      .from(endUsers)
      .where(and(eq(endUsers.clientUuid, app.clientUuid), eq(endUsers.email, email)));
    return user;
  }

  /**
   * Counts a registration tried from this client address; seconds to wait when it has tried
   * REGISTRATIONS_PER_CLIENT already, whatever their outcome (a taken email included: register's
   * 409 is the one answer that tells whether an email is registered, so how fast it can be asked
   * is bounded too).
   */
  registrationRetryAfter(address: string): Promise<number> {
    return this.accountLimits.take(registrationKey(address), this.config.accounts.registrationsPerClient);
  }

  /**
   * Whether another account mail may go to this address: at most ACCOUNT_MAILS_PER_EMAIL in the
   * window, so nobody can have this service flood an inbox with links. The answers stay the same.
   */
  private async mayMail(app: App, email: string): Promise<boolean> {
    const allowed = (await this.accountLimits.take(mailKey(app.clientUuid, email), this.config.accounts.mailsPerEmail)) === 0;
    if (!allowed) this.log.info({ client_uuid: app.clientUuid }, 'account mail not sent: this address had its share for the window');
    return allowed;
  }

  /** 'taken' when the app already has an account for that email (register's 409, the one answer that may say so). */
  async register(app: App, email: string, password: string, params: AuthorizeParams = {}): Promise<{ end_user_uuid: string } | 'taken'> {
    const passwordHash = await hashPassword(password);
    const [row] = await this.db
      .insert(endUsers)
      .values({ endUserUuid: randomUUID(), organizationUuid: app.organizationUuid, clientUuid: app.clientUuid, email, passwordHash })
      .onConflictDoNothing()
      .returning();
    if (!row) return 'taken';
    // The account stands even when the mail fails: signing in with the password sends a new link.
    await this.sendVerification(app, row, params).catch((err) => this.log.error({ err: loggableError(err) }, 'verification mail failed'));
    return { end_user_uuid: row.endUserUuid };
  }

  private async sendVerification(app: App, user: EndUser, params: AuthorizeParams): Promise<void> {
    if (!(await this.mayMail(app, user.email))) return;
    const token = await this.tokens.issue(user.endUserUuid, 'verify_email');
    await this.mail(user.email, `Confirm your email for ${app.name}`, [
      `Open this link to confirm the email address of your ${app.name} account:`,
      '',
      this.link('/verify-email', token, params),
      '',
      'The link works once, within 24 hours. If you did not create this account, ignore this message.',
    ]);
  }

  async verifyEmail(token: unknown): Promise<EndUser | undefined> {
    const endUserUuid = await this.tokens.consume(token, 'verify_email');
    if (!endUserUuid) return undefined;
    const [user] = await this.db.update(endUsers).set({ emailVerifiedAt: new Date() }).where(eq(endUsers.endUserUuid, endUserUuid)).returning();
    return user;
  }

  /**
   * Sends a reset link when the account exists and does nothing otherwise; the mail goes out
   * after the caller has answered, so neither the answer nor its timing differs.
   */
  requestPasswordReset(app: App, email: string, params: AuthorizeParams = {}): void {
    void (async () => {
      const user = await this.byEmail(app, email);
      if (!user || !(await this.mayMail(app, user.email))) return;
      const token = await this.tokens.issue(user.endUserUuid, 'password_reset');
      await this.mail(user.email, `Reset your ${app.name} password`, [
        `Someone asked to reset the password of your ${app.name} account. To choose a new one, open:`,
        '',
        this.link('/reset-password', token, params),
        '',
        'The link works once, within an hour. If it was not you, ignore this message: your password stays as it is.',
      ]);
    })().catch((err) => this.log.error({ err: loggableError(err) }, 'password reset mail failed'));
  }

  /**
   * Sets the new password, counts the email as verified (the link reached it), and signs the
   * account out everywhere: whoever knew the old password loses their sessions.
   */
  async completePasswordReset(token: unknown, password: string): Promise<boolean> {
    const endUserUuid = await this.tokens.consume(token, 'password_reset');
    if (!endUserUuid) return false;
    const passwordHash = await hashPassword(password);
    const [user] = await this.db.update(endUsers).set({ passwordHash }).where(eq(endUsers.endUserUuid, endUserUuid)).returning();
    if (!user.emailVerifiedAt) await this.db.update(endUsers).set({ emailVerifiedAt: new Date() }).where(eq(endUsers.endUserUuid, endUserUuid));
    await this.tokens.revokeAll(endUserUuid, 'password_reset');
    await revokeLoginSession(this.db, { organization_uuid: user.organizationUuid, end_user_uuid: endUserUuid, all: true });
    return true;
  }

  /**
   * The password step. Each attempt counts as a failure before the password is checked (and is
   * taken back if it was right), so a locked key, or a burst past the limit, gets no check at all;
   * an unknown email costs the same scrypt time and counts the same as a wrong password, so
   * nothing tells them apart.
   */
  async signIn(app: App, email: string, password: string, address: string, params: AuthorizeParams = {}): Promise<SignInOutcome> {
    const attempt = await this.throttle.attempt(accountKey(app.clientUuid, email), clientKey(address));
    if (attempt.refused) return { outcome: 'locked', retry_after: attempt.retryAfter };
    const user = await this.byEmail(app, email);
    const ok = user ? await verifyPassword(password, user.passwordHash) : await verifyAgainstDecoy(password);
    if (!user || !ok) return { outcome: 'invalid' };
    if (!user.emailVerifiedAt) {
      await attempt.passed();
      await this.sendVerification(app, user, params);
      return { outcome: 'unverified' };
    }
    if (user.totpConfirmedAt) {
      await attempt.passed();
      return { outcome: 'second_factor', user };
    }
    await attempt.signedIn();
    return { outcome: 'signed_in', user };
  }

  /** The TOTP step of a sign-in, throttled like the password step. */
  async secondFactor(app: App, user: EndUser, code: unknown, address: string): Promise<SignInOutcome> {
    const attempt = await this.throttle.attempt(accountKey(app.clientUuid, user.email), clientKey(address));
    if (attempt.refused) return { outcome: 'locked', retry_after: attempt.retryAfter };
    if (!(await this.totp.accept(user, code))) return { outcome: 'invalid' };
    await attempt.signedIn();
    return { outcome: 'signed_in', user };
  }

  /** A login session for a signed-in user: the Set-Cookie value that carries it. */
  async startSession(user: EndUser): Promise<string> {
    const session = await createLoginSession(
      this.db,
      { end_user_uuid: user.endUserUuid, client_uuid: user.clientUuid, organization_uuid: user.organizationUuid },
      this.config.identity.loginSessionTtlS,
    );
    return this.sessionCookie.serialize(user.clientUuid, session.sid, session.expires_at);
  }

  /** The end user whose login session cookie for this app the request carries. */
  async signedInUser(req: IncomingMessage, app: App): Promise<EndUser | undefined> {
    const session = await currentLoginSession(this.db, req, app.clientUuid, this.sessionCookie);
    return session && this.endUser(session.end_user_uuid);
  }

  private link(path: string, token: string, params: AuthorizeParams): string {
    const query = new URLSearchParams({ token, ...(params as Record<string, string>) });
    return `${this.config.identity.loginUrl}${path}?${query}`;
  }

  private async mail(to: string, subject: string, lines: string[]): Promise<void> {
    await this.mailer.send({ to, subject, text: lines.join('\n') + '\n' });
  }
}
