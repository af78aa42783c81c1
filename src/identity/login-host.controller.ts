import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { sendPage } from '../accounts/pages/respond';
import { messagePage } from '../accounts/pages/views';
import { CONFIG, DATABASE, IDENTITY } from '../common/di';
import type { AppConfig } from '../config';
import type { DatabaseHandle } from '../../db/client';
import { appByClientKey, appReturnUri, isRegisteredRedirect } from './apps';
import { burnCode, issueCode, OAuthError, pruneCodes, redeemCode, S256_CHALLENGE } from './authorization-codes';
import type { Identity } from './identity';
import { currentLoginSession, LoginSessionCookie } from './login-sessions';

/** What state and nonce may hold: they come back in the redirect and the ID token. */
const MAX_ECHOED_LENGTH = 512;

/** How a confidential client would authenticate in the body (RFC 6749 §2.3.1, RFC 7523 §2.2). */
const CLIENT_CREDENTIALS = ['client_secret', 'client_assertion', 'client_assertion_type'];

/** A single-valued query or form parameter; a repeated one is as good as absent (RFC 6749 §3.1). */
const param = (source: unknown, name: string): string | undefined => {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/**
 * The login host (LOGIN_URL): OIDC discovery, /authorize (authorization code with PKCE S256),
 * the form-encoded token endpoint and the JWKS. The hosted pages (src/accounts/) sit beside it.
 */
@Controller()
export class LoginHostController {
  private readonly loginUrl: string;
  private readonly sessionCookie: LoginSessionCookie;

  constructor(
    @Inject(IDENTITY) private readonly identity: Identity,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) config: AppConfig,
  ) {
    this.loginUrl = config.identity.loginUrl;
    this.sessionCookie = new LoginSessionCookie(this.loginUrl);
  }

  @Get('.well-known/openid-configuration')
  discovery() {
    const base = this.loginUrl;
    return {
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      jwks_uri: `${base}/jwks`,
      end_session_endpoint: `${base}/end-session`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['openid', 'email'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'email_verified'],
      authorization_response_iss_parameter_supported: true,
      // request_uri_parameter_supported defaults to true (OIDC Discovery §3). /authorize refuses request
      // and request_uri, and ignores claims: claims not returned are no error (OIDC Core §5.5.1).
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    };
  }

  @Get('jwks')
  jwks() {
    return this.identity.keys.jwks();
  }

  @Get('authorize')
  async authorize(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    const q = req.query;
    const clientKey = param(q, 'client_key') ?? param(q, 'client_id');
    const redirectUri = param(q, 'redirect_uri');
    const app = clientKey ? await appByClientKey(this.database.db, clientKey) : undefined;
    // A page, never a redirect: nothing says where the browser may safely be sent back (RFC 6749 §4.1.2.1).
    if (!app) {
      return sendPage(res, 400, messagePage('Unknown app', 'This sign-in link names no app registered here (client_key).'));
    }
    if (!redirectUri || !isRegisteredRedirect(app, redirectUri)) {
      const home = appReturnUri(app, redirectUri);
      return sendPage(
        res,
        400,
        messagePage(
          'Invalid redirect',
          `redirect_uri is not one registered for ${app.name}; nothing was sent back to it. The app's developer registers it with identity.app.configure-client.`,
          home ? { href: home, label: `Back to ${app.name}` } : undefined,
        ),
      );
    }
    const state = param(q, 'state')?.slice(0, MAX_ECHOED_LENGTH);
    const back = (params: Record<string, string | undefined>) =>
      res.redirect(302, withParams(redirectUri, { ...params, state, iss: this.loginUrl }));
    const nonce = param(q, 'nonce');
    if ((param(q, 'state')?.length ?? 0) > MAX_ECHOED_LENGTH || (nonce?.length ?? 0) > MAX_ECHOED_LENGTH) {
      return back({ error: 'invalid_request', error_description: `state and nonce are at most ${MAX_ECHOED_LENGTH} characters` });
    }

    // OIDC Core §6: a request object would carry parameters that override these; refused, never ignored.
    if (q.request !== undefined) return back({ error: 'request_not_supported', error_description: 'request objects are not supported: send the parameters in the query' });
    if (q.request_uri !== undefined) return back({ error: 'request_uri_not_supported', error_description: 'request_uri is not supported: send the parameters in the query' });
    const responseType = param(q, 'response_type');
    if (responseType === undefined) return back({ error: 'invalid_request', error_description: 'response_type is required (code)' });
    if (responseType !== 'code') {
      return back({ error: 'unsupported_response_type', error_description: 'only response_type=code is supported' });
    }
    // The app expects its answer where it asked for it; delivering it in the query instead would be silently wrong.
    const responseMode = q.response_mode;
    if (responseMode !== undefined && responseMode !== 'query') {
      return back({ error: 'invalid_request', error_description: 'response_mode: only query is supported' });
    }
    // An OpenID provider only: without openid there is no ID token to ask for (OIDC Core §3.1.2.1).
    if (!(param(q, 'scope') ?? '').split(' ').includes('openid')) {
      return back({ error: 'invalid_scope', error_description: 'scope must include openid' });
    }
    const challenge = param(q, 'code_challenge');
    if (param(q, 'code_challenge_method') !== 'S256' || !challenge || !S256_CHALLENGE.test(challenge)) {
      return back({ error: 'invalid_request', error_description: 'PKCE is required: code_challenge (43 base64url characters) with code_challenge_method=S256' });
    }
    const prompts = new Set((param(q, 'prompt') ?? '').split(' ').filter(Boolean));
    // OIDC Core §3.1.2.1: none with any other value is an error; there is no consent step or account chooser to show.
    if (prompts.has('none') && prompts.size > 1) return back({ error: 'invalid_request', error_description: 'prompt=none cannot be combined with another value' });
    if (prompts.has('consent')) return back({ error: 'consent_required', error_description: 'this login host has no consent step' });
    if (prompts.has('select_account')) return back({ error: 'account_selection_required', error_description: 'this login host has no account chooser' });
    const unknown = [...prompts].find((p) => p !== 'none' && p !== 'login');
    if (unknown) return back({ error: 'invalid_request', error_description: `prompt ${unknown.slice(0, 32)} is not supported (none, login)` });
    const maxAge = param(q, 'max_age');
    if (maxAge !== undefined && !/^\d{1,10}$/.test(maxAge)) return back({ error: 'invalid_request', error_description: 'max_age must be a number of seconds' });

    const found = await currentLoginSession(this.database.db, req, app.clientUuid, this.sessionCookie);
    // prompt=login and a max_age the sign-in is older than ask for a new sign-in; the sign-in page
    // carries neither back to /authorize, so the session it starts is then used.
    const tooOld = found && maxAge !== undefined && Date.now() - found.auth_time.getTime() > Number(maxAge) * 1000;
    const session = prompts.has('login') || tooOld ? undefined : found;
    if (!session) {
      if (prompts.has('none')) return back({ error: 'login_required' });
      return res.redirect(302, this.signInUrl(q, app.clientKey));
    }
    const code = await issueCode(this.database.db, {
      client_uuid: app.clientUuid,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      sid: session.sid,
      end_user_uuid: session.end_user_uuid,
      nonce,
    });
    await pruneCodes(this.database.db, this.identity.tokens.ttlSeconds);
    back({ code });
  }

  /** RFC 6749 §4.1.3 over application/x-www-form-urlencoded, so that ordinary OIDC clients work unchanged. */
  @Post('token')
  @HttpCode(200)
  async token(@Req() req: Request, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    const authorization = req.headers.authorization;
    const code = param(body, 'code');
    try {
      // Every client is public (token_endpoint_auth_methods_supported: none): a secret it sends was made up, and a
      // client that believes it has one is misconfigured, so it is told rather than let through.
      if (authorization !== undefined || CLIENT_CREDENTIALS.some((name) => (body as Record<string, unknown> | undefined)?.[name] !== undefined)) {
        throw new OAuthError('invalid_client', 'clients of this login host are public: send client_id in the body, with no Authorization header, client_secret or client_assertion');
      }
      const grantType = param(body, 'grant_type');
      if (grantType !== 'authorization_code') {
        throw grantType === undefined
          ? new OAuthError('invalid_request', 'grant_type is required')
          : new OAuthError('unsupported_grant_type', 'only grant_type=authorization_code is supported');
      }
      const [verifier, clientId, redirectUri] = ['code_verifier', 'client_id', 'redirect_uri'].map((n) => param(body, n));
      if (!code || !verifier || !clientId || !redirectUri) {
        throw new OAuthError('invalid_request', 'code, code_verifier, client_id and redirect_uri are required');
      }
      if (!(await appByClientKey(this.database.db, clientId))) throw new OAuthError('invalid_client', 'client_id names no app registered here');
      const issued = await redeemCode(this.database.db, this.identity.tokens, {
        code,
        code_verifier: verifier,
        client_key: clientId,
        redirect_uri: redirectUri,
        origin: req.headers.origin,
      });
      return { access_token: issued.access_token, token_type: 'Bearer', expires_in: issued.expires_in, id_token: issued.id_token };
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      if (code) await burnCode(this.database.db, this.identity.tokens.ttlSeconds, code);
      // RFC 6749 §5.2: a client that authenticated with the Authorization header gets 401 and a challenge in its scheme.
      if (err.error === 'invalid_client' && authorization !== undefined) {
        const scheme = /^[A-Za-z][A-Za-z0-9-]{0,31}(?=\s|$)/.exec(authorization)?.[0] ?? 'Basic';
        res.status(401).setHeader('WWW-Authenticate', `${scheme} realm="${this.loginUrl}"`);
      } else {
        res.status(400);
      }
      return err.body;
    }
  }

  /** The hosted sign-in page, with the same authorize parameters (client_key for client_id). */
  private signInUrl(query: Request['query'], clientKey: string): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (typeof v === 'string' && k !== 'client_id' && k !== 'client_key') params.set(k, v);
    }
    params.set('client_key', clientKey);
    return `${this.loginUrl}/sign-in?${params}`;
  }
}
