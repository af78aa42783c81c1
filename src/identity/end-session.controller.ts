import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AccountsService } from '../accounts/accounts.service';
import { CSRF_FIELD } from '../accounts/csrf';
import { sendPage } from '../accounts/pages/respond';
import { messagePage, signOutPage } from '../accounts/pages/views';
import { CONFIG, DATABASE, IDENTITY } from '../common/di';
import type { AppConfig } from '../config';
import type { DatabaseHandle } from '../../db/client';
import { appByClientKey, type IdentityApp, isRegisteredRedirect } from './apps';
import { EndUserTokenRejected, type IdTokenHint, UnknownSigningKey } from './end-user-tokens';
import type { Identity } from './identity';
import { currentLoginSession, LoginSessionCookie, revokeLoginSession } from './login-sessions';

/** What state may hold: it comes back in the redirect, as /authorize's does. */
const MAX_STATE_LENGTH = 512;

/** A single-valued query or form parameter; a repeated one is as good as absent. */
const param = (source: unknown, name: string): string | undefined => {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

class Refused extends Error {
  constructor(
    readonly field: string,
    readonly rule: string,
  ) {
    super(`${field} ${rule}`);
  }
}

/** Where the user goes once signed out, validated before anything is ended. */
interface Target {
  app: IdentityApp;
  redirectUri?: string;
  state?: string;
}

/**
 * OIDC RP-Initiated Logout 1.0 on the login host: `{LOGIN_URL}/end-session` ends the browser's
 * login session of one app (the same revocation as identity.end-user.session.revoke, so the
 * session's tokens are refused from the next request on), clears that app's session cookie and
 * sends the browser to a registered redirect URI with `state`, or shows a signed-out page. An app
 * reaches it by top-level navigation: the session cookie is SameSite=Lax, so a cross-site fetch
 * would not carry it. A request nothing vouches for is asked about first (README, End-user sign-in).
 */
@Controller()
export class EndSessionController {
  private readonly sessionCookie: LoginSessionCookie;

  constructor(
    @Inject(IDENTITY) private readonly identity: Identity,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) config: AppConfig,
    private readonly accounts: AccountsService,
  ) {
    this.sessionCookie = new LoginSessionCookie(config.identity.loginUrl);
  }

  @Get('end-session')
  async endSessionGet(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.endSession(req, res, req.query);
  }

  /** RP-Initiated Logout §2: GET and POST alike. */
  @Post('end-session')
  async endSessionPost(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.endSession(req, res, req.body);
  }

  /** The confirmation page's form, on the login host's own origin: it carries the cookie and a CSRF token. */
  @Post('end-session/confirm')
  async confirm(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    if (!this.accounts.csrf.verify(req.headers.cookie, param(req.body, CSRF_FIELD))) {
      return sendPage(res, 403, messagePage('This form has expired', 'The form was not sent from this page, or it is too old. Go back to the app and sign out again.'));
    }
    const target = await this.target(res, req.body, undefined);
    if (!target) return;
    const current = await currentLoginSession(this.database.db, req, target.app.clientUuid, this.sessionCookie);
    if (current) await this.revoke(target.app, current.sid, current.end_user_uuid);
    this.signedOut(res, target);
  }

  private async endSession(req: Request, res: Response, source: unknown): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    let hint: IdTokenHint | undefined;
    const hintToken = param(source, 'id_token_hint');
    if (hintToken !== undefined) {
      try {
        hint = await this.identity.tokens.verifyIdTokenHint(hintToken);
      } catch (err) {
        // A key rotated out since: the hint cannot vouch, so the user is asked, rather than kept signed in.
        if (!(err instanceof UnknownSigningKey)) {
          if (err instanceof EndUserTokenRejected) return this.refuse(res, new Refused('id_token_hint', err.message));
          throw err;
        }
      }
    }
    const target = await this.target(res, source, hint);
    if (!target) return;
    const { app } = target;
    const current = await currentLoginSession(this.database.db, req, app.clientUuid, this.sessionCookie);
    if (hint) {
      // The hint's own session even when this browser's cookie is gone, and the cookie's when it is the same user's.
      if (hint.sid) await this.revoke(app, hint.sid, hint.sub);
      if (current?.end_user_uuid === hint.sub) await this.revoke(app, current.sid, hint.sub);
    }
    const unvouched = current !== undefined && current.end_user_uuid !== hint?.sub;
    // A cross-site form post carries no SameSite=Lax cookie: without the hint's sid, its session is unseen.
    const unseen = req.method === 'POST' && !hint?.sid;
    if (unvouched || unseen) {
      const user = current && (await this.accounts.endUser(current.end_user_uuid));
      const fields: Record<string, string> = { client_id: app.clientKey };
      if (target.redirectUri !== undefined) fields.post_logout_redirect_uri = target.redirectUri;
      if (target.state !== undefined) fields.state = target.state;
      return sendPage(res, 200, signOutPage({ csrf: this.csrfFor(req, res), appName: app.name, email: user?.email, fields }));
    }
    this.signedOut(res, target);
  }

  /** The app and the way back; a page answered (nothing ended, nowhere redirected) when a parameter is not acceptable. */
  private async target(res: Response, source: unknown, hint: IdTokenHint | undefined): Promise<Target | undefined> {
    try {
      const clientId = param(source, 'client_id') ?? param(source, 'client_key');
      if (clientId !== undefined && hint && hint.aud !== clientId) throw new Refused('id_token_hint', 'must be issued to the app client_id names');
      const key = clientId ?? hint?.aud;
      if (key === undefined) throw new Refused('client_id', 'is required when there is no id_token_hint');
      const app = await appByClientKey(this.database.db, key);
      if (!app) throw new Refused(clientId !== undefined ? 'client_id' : 'id_token_hint', 'must name an app registered here');
      const redirectUri = param(source, 'post_logout_redirect_uri');
      if (redirectUri !== undefined && !isRegisteredRedirect(app, redirectUri)) {
        throw new Refused('post_logout_redirect_uri', `must be exactly one of the redirect URIs registered for ${app.name}`);
      }
      const state = param(source, 'state');
      if (state !== undefined && state.length > MAX_STATE_LENGTH) throw new Refused('state', `must be at most ${MAX_STATE_LENGTH} characters`);
      return { app, redirectUri, state };
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      this.refuse(res, err);
      return undefined;
    }
  }

  private refuse(res: Response, refused: Refused): void {
    sendPage(res, 400, messagePage('Sign-out request not valid', `${refused.field} ${refused.rule}. Nothing was signed out; go back to the app.`));
  }

  private revoke(app: IdentityApp, sid: string, endUserUuid: string) {
    return revokeLoginSession(this.database.db, { organization_uuid: app.organizationUuid, client_uuid: app.clientUuid, end_user_uuid: endUserUuid, sid });
  }

  private signedOut(res: Response, { app, redirectUri, state }: Target): void {
    res.append('Set-Cookie', this.sessionCookie.clear(app.clientUuid));
    if (redirectUri === undefined) return sendPage(res, 200, messagePage('Signed out', `You are signed out of ${app.name}.`));
    const back = new URL(redirectUri);
    if (state !== undefined) back.searchParams.set('state', state);
    res.redirect(302, back.toString());
  }

  private csrfFor(req: Request, res: Response): string {
    const { token, setCookie } = this.accounts.csrf.issue(req.headers.cookie);
    if (setCookie) res.append('Set-Cookie', setCookie);
    return token;
  }
}
