import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { emailSchema } from './account-schemas';
import { type App, AccountsService, type SignInOutcome } from './accounts.service';
import { type AuthorizeParams, authorizeQuery, pickAuthorizeParams } from './authorize-params';
import { CSRF_FIELD } from './csrf';
import { passwordSchema } from './passwords';
import { isLocked } from './totp-enrolment';
import { sendPage } from './pages/respond';
import {
  forgotPasswordPage,
  messagePage,
  type MfaContext,
  type PageLink,
  registerPage,
  resetPasswordPage,
  signInLink,
  signInPage,
  totpChallengePage,
  totpConfirmPage,
  totpEnabledPage,
  totpStartPage,
  verifyEmailPage,
} from './pages/views';
import { clientAddress } from '../common/client-address';
import { appReturnUri, isRegisteredRedirect } from '../identity/apps';

type Form = Record<string, unknown>;

const text = (form: Form, name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
const formOf = (req: Request): Form => (req.body && typeof req.body === 'object' ? req.body : {});

function minutes(seconds: number) {
  const m = Math.ceil(seconds / 60);
  return m === 1 ? '1 minute' : `${m} minutes`;
}

/**
 * The hosted account pages on the login host: plain HTML forms, no script. Every POST checks
 * its CSRF field first and does nothing without it. Sign-in ends in a login session cookie and
 * a redirect to /authorize with the parameters the page was opened with.
 */
@Controller()
export class AccountPagesController {
  constructor(private readonly accounts: AccountsService) {}

  /** The CSRF token for this browser's form (setting its cookie when it has none). */
  private csrfFor(req: Request, res: Response): string {
    const { token, setCookie } = this.accounts.csrf.issue(req.headers.cookie);
    if (setCookie) res.append('Set-Cookie', setCookie);
    return token;
  }

  /** False (and a 403 page answered) when the form's CSRF field is missing or does not match. */
  private checkCsrf(req: Request, res: Response): boolean {
    if (this.accounts.csrf.verify(req.headers.cookie, formOf(req)[CSRF_FIELD])) return true;
    sendPage(
      res,
      403,
      messagePage('This form has expired', 'The form was not sent from this page, or it is too old. Go back, reload the page and try again.'),
    );
    return false;
  }

  /** The app the parameters name; undefined (and an error page answered) otherwise. */
  private async appFor(params: AuthorizeParams, res: Response): Promise<App | undefined> {
    const app = await this.accounts.findApp(params.client_key);
    if (!app) sendPage(res, 400, messagePage('Unknown app', 'This link does not name an app that signs users in here. Go back to the app and start again.'));
    return app;
  }

  private locked(res: Response, retryAfter: number, what = 'failed sign-ins', back?: PageLink) {
    sendPage(
      res,
      429,
      messagePage('Too many attempts', `Too many ${what}. For your security, try again in ${minutes(retryAfter)}.`, back),
      { 'Retry-After': String(retryAfter) },
    );
  }

  /**
   * Sign-in's way out: the authorization request ends at the app, refused by the user
   * (access_denied, RFC 6749 §4.1.2.1) with its state and the issuer (RFC 9207). Only to a redirect
   * URI registered for the app, since the page's parameters are whatever its link said.
   */
  private cancelLink(app: App, params: AuthorizeParams): PageLink | undefined {
    if (!params.redirect_uri || !isRegisteredRedirect(app, params.redirect_uri)) return undefined;
    const url = new URL(params.redirect_uri);
    url.searchParams.set('error', 'access_denied');
    url.searchParams.set('error_description', 'the user cancelled the sign-in');
    if (params.state !== undefined) url.searchParams.set('state', params.state);
    url.searchParams.set('iss', this.accounts.loginUrl);
    return { href: url.toString(), label: `Cancel and go back to ${app.name}` };
  }

  @Get('sign-in')
  async signInForm(@Req() req: Request, @Res() res: Response) {
    const params = pickAuthorizeParams(req.query);
    const app = await this.appFor(params, res);
    if (app) sendPage(res, 200, signInPage({ appName: app.name, params, csrf: this.csrfFor(req, res), cancel: this.cancelLink(app, params) }));
  }

  @Post('sign-in')
  async signIn(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const app = await this.appFor(params, res);
    if (!app) return;
    const email = emailSchema.safeParse(text(form, 'email'));
    const password = text(form, 'password');
    const outcome: SignInOutcome =
      email.success && passwordSchema.safeParse(password).success
        ? await this.accounts.signIn(app, email.data, password, clientAddress(req), params)
        : { outcome: 'invalid' };
    if (outcome.outcome === 'invalid') {
      const error = 'The email or password is not right.';
      return sendPage(
        res,
        400,
        signInPage({ appName: app.name, params, csrf: this.csrfFor(req, res), email: text(form, 'email'), error, cancel: this.cancelLink(app, params) }),
      );
    }
    if (outcome.outcome === 'unverified') {
      return sendPage(
        res,
        403,
        messagePage('Confirm your email first', 'We have sent a new confirmation link to your email address. Open it, then sign in again.'),
      );
    }
    if (outcome.outcome === 'second_factor') {
      const pending = this.accounts.challenge.issue({ end_user_uuid: outcome.user.endUserUuid, client_uuid: app.clientUuid });
      return sendPage(res, 200, totpChallengePage({ appName: app.name, params, csrf: this.csrfFor(req, res), pending, cancel: this.cancelLink(app, params) }));
    }
    await this.finish(res, outcome, params);
  }

  @Post('sign-in/totp')
  async signInTotp(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const app = await this.appFor(params, res);
    if (!app) return;
    const pending = this.accounts.challenge.open(form.pending);
    const user = pending?.client_uuid === app.clientUuid ? await this.accounts.endUser(pending.end_user_uuid) : undefined;
    if (!user) {
      return sendPage(res, 400, messagePage('Sign in again', 'This sign-in took too long. Start again.', { href: signInLink(params), label: 'Sign in' }));
    }
    const outcome = await this.accounts.secondFactor(app, user, text(form, 'code'), clientAddress(req));
    if (outcome.outcome === 'invalid') {
      const error = 'That code is not right. Enter the code your app shows now.';
      return sendPage(
        res,
        400,
        totpChallengePage({ appName: app.name, params, csrf: this.csrfFor(req, res), pending: text(form, 'pending'), error, cancel: this.cancelLink(app, params) }),
      );
    }
    await this.finish(res, outcome, params);
  }

  private async finish(res: Response, outcome: SignInOutcome, params: AuthorizeParams) {
    if (outcome.outcome === 'locked') return this.locked(res, outcome.retry_after);
    if (outcome.outcome !== 'signed_in') throw new Error(`sign-in cannot finish from ${outcome.outcome}`);
    const cookie = await this.accounts.startSession(outcome.user);
    res.append('Set-Cookie', cookie);
    res.redirect(302, `${this.accounts.loginUrl}/authorize?${authorizeQuery(params)}`);
  }

  @Get('register')
  async registerForm(@Req() req: Request, @Res() res: Response) {
    const params = pickAuthorizeParams(req.query);
    const app = await this.appFor(params, res);
    if (app) sendPage(res, 200, registerPage({ appName: app.name, params, csrf: this.csrfFor(req, res) }));
  }

  @Post('register')
  async register(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const wait = await this.accounts.registrationRetryAfter(clientAddress(req));
    if (wait > 0) return this.locked(res, wait, 'registrations from your network');
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const app = await this.appFor(params, res);
    if (!app) return;
    const again = (status: number, error: string) =>
      sendPage(res, status, registerPage({ appName: app.name, params, csrf: this.csrfFor(req, res), email: text(form, 'email'), error }));
    const email = emailSchema.safeParse(text(form, 'email'));
    if (!email.success) return again(422, 'Enter a valid email address.');
    const password = passwordSchema.safeParse(text(form, 'password'));
    if (!password.success) return again(422, `The password ${password.error.issues[0].message}.`);
    const result = await this.accounts.register(app, email.data, password.data, params);
    if (result === 'taken') return again(409, 'An account with this email already exists. Sign in, or reset your password.');
    sendPage(
      res,
      201,
      messagePage('Check your email', `We have sent a link to ${email.data}. Open it to confirm your address, then sign in.`, {
        href: signInLink(params),
        label: 'Sign in',
      }),
    );
  }

  @Get('verify-email')
  verifyEmailForm(@Req() req: Request, @Res() res: Response) {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    sendPage(res, 200, verifyEmailPage({ params: pickAuthorizeParams(req.query), csrf: this.csrfFor(req, res), token }));
  }

  @Post('verify-email')
  async verifyEmail(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const user = await this.accounts.verifyEmail(text(form, 'token'));
    const next = params.client_key ? { href: signInLink(params), label: 'Sign in' } : undefined;
    if (!user) return sendPage(res, 400, messagePage('Link not valid', 'This link was already used or has expired. Sign in to get a new one.', next));
    sendPage(res, 200, messagePage('Email confirmed', 'Your email address is confirmed. You can sign in now.', next));
  }

  @Get('forgot-password')
  async forgotPasswordForm(@Req() req: Request, @Res() res: Response) {
    const params = pickAuthorizeParams(req.query);
    const app = await this.appFor(params, res);
    if (app) sendPage(res, 200, forgotPasswordPage({ appName: app.name, params, csrf: this.csrfFor(req, res) }));
  }

  /** The same page whether or not the account exists. */
  @Post('forgot-password')
  async forgotPassword(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const app = await this.appFor(params, res);
    if (!app) return;
    const email = emailSchema.safeParse(text(form, 'email'));
    if (email.success) this.accounts.requestPasswordReset(app, email.data, params);
    sendPage(
      res,
      200,
      messagePage('Check your email', 'If an account exists for that address, we have sent it a link to choose a new password.', {
        href: signInLink(params),
        label: 'Back to sign in',
      }),
    );
  }

  @Get('reset-password')
  resetPasswordForm(@Req() req: Request, @Res() res: Response) {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    sendPage(res, 200, resetPasswordPage({ params: pickAuthorizeParams(req.query), csrf: this.csrfFor(req, res), token }));
  }

  @Post('reset-password')
  async resetPassword(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const params = pickAuthorizeParams(form);
    const token = text(form, 'token');
    const password = passwordSchema.safeParse(text(form, 'password'));
    if (!password.success) {
      const error = `The password ${password.error.issues[0].message}.`;
      return sendPage(res, 422, resetPasswordPage({ params, csrf: this.csrfFor(req, res), token, error }));
    }
    const next = params.client_key ? { href: signInLink(params), label: 'Sign in' } : undefined;
    if (!(await this.accounts.completePasswordReset(token, password.data))) {
      return sendPage(res, 400, messagePage('Link not valid', 'This link was already used or has expired. Ask for a new one.', next));
    }
    sendPage(res, 200, messagePage('Password changed', 'Your new password is set, and you were signed out everywhere. Sign in with it.', next));
  }

  /**
   * The signed-in end user (login session cookie) of the app the parameters name, and what the
   * two-step verification pages carry: the app, and their way back to it (appReturnUri: the
   * redirect_uri they were opened with when it is the app's). A page answered otherwise.
   */
  private async mfaSession(req: Request, res: Response, source: Record<string, unknown>) {
    const picked = pickAuthorizeParams(source);
    const app = await this.appFor(picked, res);
    if (!app) return undefined;
    const home = appReturnUri(app, picked.redirect_uri);
    const params: AuthorizeParams = home ? { client_key: app.clientKey, redirect_uri: home } : { client_key: app.clientKey };
    const user = await this.accounts.signedInUser(req, app);
    if (!user) {
      // Signing in starts at the app, which holds the PKCE verifier the code exchange needs.
      const signIn = home ? { href: home, label: `Go to ${app.name} to sign in` } : undefined;
      sendPage(res, 401, messagePage('Sign in first', `Sign in to ${app.name}, then come back to this page.`, signIn));
      return undefined;
    }
    const ctx: MfaContext = { params, csrf: this.csrfFor(req, res), back: home ? { href: home, label: `Back to ${app.name}` } : undefined };
    return { user, ctx };
  }

  @Get('mfa/totp')
  async totpPage(@Req() req: Request, @Res() res: Response) {
    const session = await this.mfaSession(req, res, req.query);
    if (!session) return;
    const { user, ctx } = session;
    sendPage(res, 200, user.totpConfirmedAt ? totpEnabledPage(ctx) : totpStartPage(ctx));
  }

  @Post('mfa/totp')
  async totpStart(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const session = await this.mfaSession(req, res, formOf(req));
    if (!session) return;
    const { user, ctx } = session;
    const started = await this.accounts.totp.start(user, text(formOf(req), 'password'), clientAddress(req));
    if (started === 'enrolled') return sendPage(res, 200, totpEnabledPage(ctx));
    if (started === 'wrong_password') return sendPage(res, 422, totpStartPage({ ...ctx, error: 'That password is not right.' }));
    if (isLocked(started)) return this.locked(res, started.retryAfter, 'wrong passwords or codes', ctx.back);
    sendPage(res, 200, totpConfirmPage({ ...ctx, key: { secret: started.secret, otpauthUri: started.otpauth_uri } }));
  }

  @Post('mfa/totp/confirm')
  async totpConfirm(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const form = formOf(req);
    const session = await this.mfaSession(req, res, form);
    if (!session) return;
    const { user, ctx } = session;
    const result = await this.accounts.totp.confirm(user, text(form, 'code'), clientAddress(req));
    if (isLocked(result)) return this.locked(res, result.retryAfter, 'wrong passwords or codes', ctx.back);
    if (result === 'enabled') return sendPage(res, 200, totpEnabledPage({ ...ctx, note: 'Two-step verification is now on.' }));
    if (result === 'none') return sendPage(res, 409, totpStartPage(ctx));
    if (user.totpConfirmedAt) return sendPage(res, 409, totpEnabledPage(ctx));
    sendPage(res, 422, totpConfirmPage({ ...ctx, error: 'That code is not right. Enter the code your app shows now.' }));
  }

  @Post('mfa/totp/remove')
  async totpRemove(@Req() req: Request, @Res() res: Response) {
    if (!this.checkCsrf(req, res)) return;
    const session = await this.mfaSession(req, res, formOf(req));
    if (!session) return;
    const { user, ctx } = session;
    const result = await this.accounts.totp.remove(user, text(formOf(req), 'code'), clientAddress(req));
    if (isLocked(result)) return this.locked(res, result.retryAfter, 'wrong passwords or codes', ctx.back);
    if (result === 'invalid') {
      return sendPage(res, 422, totpEnabledPage({ ...ctx, error: 'That code is not right. Enter the code your app shows now.' }));
    }
    sendPage(res, 200, totpStartPage(ctx));
  }
}
