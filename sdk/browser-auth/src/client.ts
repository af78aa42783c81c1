import { createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { ApiRequestError, CallbackError, InvalidTokenError, LoginRequiredError, TokenRequestError } from './errors.js';
import { randomToken, s256Challenge } from './pkce.js';
import { handOffToParent, inRenewFrame, runRenewFrame } from './renew-frame.js';
import { resolveStore, type StorageChoice } from './storage.js';

/** Where `make up` serves the API and the login host. */
export const DEFAULT_IDENTITY_API = 'http://127.0.0.1:3000';
export const DEFAULT_LOGIN_URL = 'http://127.0.0.1:3001';

export interface AuthClientOptions {
  /** The app's public client_key (from identity.app.provision). */
  clientKey: string;
  /** The login host's origin, also the tokens' issuer. */
  loginUrl?: string;
  /** The API's origin (without `/api`). */
  identityApi?: string;
  /** One of the app's registered redirect URIs, on this page's origin. */
  redirectUri?: string;
  storage?: StorageChoice;
  autoRenew?: boolean;
  renewSkewSeconds?: number;
  /** How long renew() waits for the hidden frame before it gives up. */
  renewTimeoutSeconds?: number;
  /**
   * Called once whenever the user must sign in again: the login host answered login_required, the
   * API refused the token (401), or the user signed out in another tab of this app.
   */
  onRequiresLogin?: () => void;
}

export interface EndUserClaims extends JWTPayload {
  sub: string;
  exp: number;
  email?: string;
  org?: string;
  app?: string;
  sid?: string;
  token_type?: string;
}

export interface Session {
  token: string;
  claims: EndUserClaims;
  email: string | undefined;
  endUserUuid: string;
  expiresAt: Date;
}

export interface RegisterResult {
  end_user_uuid: string;
  email_verification: string;
}

export interface AuthClient {
  signIn(): Promise<void>;
  /**
   * On every page load: completes a sign-in that returns here (the session), or a sign-out that
   * returns here (null, its `state` removed from the address bar); null on any other page.
   */
  handleCallback(): Promise<Session | null>;
  getSession(): Session | null;
  renew(): Promise<Session>;
  /**
   * Clears this tab's session and tells the app's other tabs; then (unless `endLoginSession` is
   * false) sends the page to the login host's end-session endpoint, which ends the login session
   * before it sends the browser back to `redirectUri`. That promise never settles: the page is leaving.
   */
  signOut(options?: { endLoginSession?: boolean }): Promise<void>;
  verify(token: string): Promise<EndUserClaims>;
  register(email: string, password: string): Promise<RegisterResult>;
  /** `Bearer <token>` for the current session; throws LoginRequiredError without one. */
  authorizationHeader(): string;
  /**
   * fetch() with the current token, renewed first when it has expired; a path starting with `/` is
   * resolved against identityApi. A 401 answer means the token is no longer accepted: the session is
   * cleared, onRequiresLogin called and LoginRequiredError thrown.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

interface Transaction {
  verifier: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

const CALLBACK_PARAMS = ['code', 'state', 'iss', 'error', 'error_description', 'error_uri'];
// setTimeout fires at once above 2^31-1 ms.
const MAX_TIMER_MS = 2_147_483_647;
// Long enough for a sign-up whose confirmation mail is opened in another tab, which then comes back with this state.
const TRANSACTION_TTL_MS = 30 * 60_000;
const SIGNED_OUT_MESSAGE = 'signed-out';

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export function createAuthClient(options: AuthClientOptions): AuthClient {
  if (!options || typeof options.clientKey !== 'string' || options.clientKey === '') {
    throw new TypeError('createAuthClient: clientKey is required');
  }
  const clientKey = options.clientKey;
  const issuer = trimSlash(options.loginUrl ?? DEFAULT_LOGIN_URL);
  const identityApi = trimSlash(options.identityApi ?? DEFAULT_IDENTITY_API);
  const redirectUri = options.redirectUri ?? `${window.location.origin}/`;
  const callbackOrigin = new URL(redirectUri).origin;
  const autoRenew = options.autoRenew ?? true;
  const skewMs = (options.renewSkewSeconds ?? 60) * 1000;
  const renewTimeoutMs = (options.renewTimeoutSeconds ?? 10) * 1000;
  const store = resolveStore(options.storage ?? 'sessionStorage');
  // A PKCE transaction must survive the redirect whatever the token's storage, and reach another
  // tab of the origin: the hosted sign-up mails a link carrying its state, which may be opened
  // anywhere. Each is keyed by its state, removed on use and expires. It holds no token.
  const transactions = window.localStorage;
  const sessionKey = `wfe-auth.session.${clientKey}`;
  const idTokenKey = `wfe-auth.id-token.${clientKey}`;
  const transactionPrefix = `wfe-auth.transaction.${clientKey}.`;
  // The state of a sign-out on its way to the login host: it comes back to this very tab.
  const signOutKey = `wfe-auth.sign-out.${clientKey}`;
  const jwks = createRemoteJWKSet(new URL(`${identityApi}/api/auth/end-user/jwks`), { cooldownDuration: 1000 });
  const framed = inRenewFrame();
  const tabs = !framed && typeof BroadcastChannel === 'function' ? new BroadcastChannel(`wfe-auth.${clientKey}`) : undefined;

  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: Promise<Session> | undefined;
  // Bumped by signOut and login_required, so a renewal that was under way stores nothing after them.
  let generation = 0;

  function toSession(token: string): Session {
    let claims: EndUserClaims;
    try {
      claims = decodeJwt(token) as EndUserClaims;
    } catch (cause) {
      throw new CallbackError('the token endpoint answered something that is not a JWT', 'token_mismatch', String(cause));
    }
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (claims.iss !== issuer || !audiences.includes(clientKey) || typeof claims.exp !== 'number' || typeof claims.sub !== 'string') {
      throw new CallbackError('the token was not issued by this login host for this app', 'token_mismatch');
    }
    return { token, claims, email: claims.email, endUserUuid: claims.sub, expiresAt: new Date(claims.exp * 1000) };
  }

  function readSession(): Session | null {
    const token = store.getItem(sessionKey);
    if (!token) return null;
    try {
      return toSession(token);
    } catch {
      store.removeItem(sessionKey);
      return null;
    }
  }

  /** renewSkewSeconds before expiry; at half the time left when the token lives shorter than the skew, so renewals never loop. */
  function renewDelay(session: Session): number {
    const left = session.expiresAt.getTime() - Date.now();
    return left > skewMs ? left - skewMs : left / 2;
  }

  function stopTimer() {
    clearTimeout(timer);
    timer = undefined;
  }

  function schedule(session: Session, delayMs = renewDelay(session)) {
    stopTimer();
    if (!autoRenew || framed) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        renew().catch((error: unknown) => {
          if (error instanceof LoginRequiredError) return;
          // A transient failure (timeout, network): try again while the token still works.
          const current = readSession();
          const left = current ? current.expiresAt.getTime() - Date.now() : 0;
          if (current && left > 0) schedule(current, Math.max(1000, Math.min(30_000, left / 2)));
        });
      },
      Math.min(Math.max(delayMs, 0), MAX_TIMER_MS),
    );
  }

  function clearLocal() {
    generation += 1;
    stopTimer();
    store.removeItem(sessionKey);
    store.removeItem(idTokenKey);
  }

  function pendingTransactions(): string[] {
    const keys: string[] = [];
    for (let i = 0; i < transactions.length; i++) {
      const key = transactions.key(i);
      if (key?.startsWith(transactionPrefix)) keys.push(key);
    }
    return keys;
  }

  function readTransaction(key: string): Transaction | undefined {
    try {
      const saved = JSON.parse(transactions.getItem(key) ?? 'null') as Partial<Transaction> | null;
      if (typeof saved?.verifier === 'string' && typeof saved.expiresAt === 'number' && saved.expiresAt > Date.now()) {
        return { verifier: saved.verifier, expiresAt: saved.expiresAt };
      }
    } catch {
      // not one of ours: removed below
    }
    return undefined;
  }

  /** Expired (or unreadable) transactions go, so abandoned sign-ins do not pile up. */
  function pruneTransactions() {
    for (const key of pendingTransactions()) if (!readTransaction(key)) transactions.removeItem(key);
  }

  /** The sign-in `state` belongs to, removed so that its callback is handled once, in one tab. */
  function takeTransaction(state: string): Transaction {
    pruneTransactions();
    const key = transactionPrefix + state;
    const transaction = readTransaction(key);
    transactions.removeItem(key);
    if (transaction) return transaction;
    if (pendingTransactions().length) {
      throw new CallbackError('the callback state does not match a sign-in started in this browser', 'state_mismatch');
    }
    throw new CallbackError('no sign-in was started in this browser, or it is over 30 minutes old', 'no_transaction');
  }

  function loginRequired(): never {
    clearLocal();
    options.onRequiresLogin?.();
    throw new LoginRequiredError('the login host has no valid session for this user: sign in again');
  }

  function authorizeUrl(state: string, challenge: string, prompt?: 'none'): string {
    const url = new URL(`${issuer}/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      scope: 'openid',
      client_key: clientKey,
      redirect_uri: redirectUri,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...(prompt ? { prompt } : {}),
    }).toString();
    return url.toString();
  }

  /** The callback's own checks (RFC 6749 §10.12 state, RFC 9207 iss), before any code is used. */
  function checkCallback(params: URLSearchParams, expectedState: string): string {
    if (params.get('state') !== expectedState) {
      throw new CallbackError('the callback state does not match the sign-in this page started', 'state_mismatch');
    }
    if (params.get('iss') !== issuer) {
      throw new CallbackError(`the callback iss is not the login host ${issuer}`, 'iss_mismatch');
    }
    const error = params.get('error');
    if (error) throw new CallbackError(`the login host answered ${error}`, error, params.get('error_description') ?? undefined);
    const code = params.get('code');
    if (!code) throw new CallbackError('the callback carries no code', 'invalid_request');
    return code;
  }

  interface Exchanged {
    session: Session;
    /** What signOut() sends back as id_token_hint. */
    idToken?: string;
  }

  async function exchange(code: string, verifier: string): Promise<Exchanged> {
    let res: Response;
    try {
      res = await fetch(`${identityApi}/api/auth/end-user/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ code, code_verifier: verifier }),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (cause) {
      throw new TokenRequestError(`the token endpoint ${identityApi} could not be reached`, 0, 'network_error', String(cause), { cause });
    }
    const body = (await res.json().catch(() => ({}))) as { token?: unknown; id_token?: unknown; error?: unknown; error_description?: unknown };
    if (!res.ok || typeof body.token !== 'string') {
      const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
      const description = typeof body.error_description === 'string' ? body.error_description : undefined;
      throw new TokenRequestError(`the token endpoint refused the code: ${code}`, res.status, code, description);
    }
    return { session: toSession(body.token), idToken: typeof body.id_token === 'string' ? body.id_token : undefined };
  }

  function keep({ session, idToken }: Exchanged) {
    store.setItem(sessionKey, session.token);
    if (idToken) store.setItem(idTokenKey, idToken);
    else store.removeItem(idTokenKey);
    schedule(session);
  }

  function cleanAddressBar() {
    const url = new URL(window.location.href);
    for (const name of CALLBACK_PARAMS) url.searchParams.delete(name);
    window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  }

  async function renewOnce(): Promise<Session> {
    const started = generation;
    const state = randomToken();
    const verifier = randomToken();
    const params = await runRenewFrame(authorizeUrl(state, await s256Challenge(verifier), 'none'), callbackOrigin, renewTimeoutMs);
    if (params.get('error') === 'login_required' && params.get('state') === state && params.get('iss') === issuer) loginRequired();
    const exchanged = await exchange(checkCallback(params, state), verifier);
    if (generation !== started) throw new LoginRequiredError('signed out while the renewal was under way');
    keep(exchanged);
    return exchanged.session;
  }

  function renew(): Promise<Session> {
    inflight ??= renewOnce().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  async function readError(res: Response): Promise<ApiRequestError> {
    const body = (await res.json().catch(() => ({}))) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const code = typeof body.error?.code === 'string' ? body.error.code : `http_${res.status}`;
    const message = typeof body.error?.message === 'string' ? body.error.message : `HTTP ${res.status}`;
    return new ApiRequestError(message, res.status, code, Array.isArray(body.error?.details) ? body.error.details : []);
  }

  function authorizationHeader(): string {
    const session = client.getSession();
    if (!session) throw new LoginRequiredError('no signed-in session');
    return `Bearer ${session.token}`;
  }

  const client: AuthClient = {
    async signIn() {
      pruneTransactions();
      const state = randomToken();
      const verifier = randomToken();
      const transaction: Transaction = { verifier, expiresAt: Date.now() + TRANSACTION_TTL_MS };
      transactions.setItem(transactionPrefix + state, JSON.stringify(transaction));
      window.location.assign(authorizeUrl(state, await s256Challenge(verifier)));
    },

    async handleCallback() {
      const params = new URLSearchParams(window.location.search);
      const state = params.get('state');
      if (state === null || framed) return null;
      if (!params.has('code') && !params.has('error')) {
        // The end-session endpoint's way back: the login session ended before it redirected here.
        if (window.sessionStorage.getItem(signOutKey) !== state) return null;
        window.sessionStorage.removeItem(signOutKey);
        cleanAddressBar();
        return null;
      }
      cleanAddressBar();
      const transaction = takeTransaction(state);
      const exchanged = await exchange(checkCallback(params, state), transaction.verifier);
      generation += 1;
      keep(exchanged);
      return exchanged.session;
    },

    getSession() {
      const session = readSession();
      if (!session || session.expiresAt.getTime() <= Date.now()) return null;
      return session;
    },

    renew,

    signOut({ endLoginSession = true } = {}) {
      const idToken = store.getItem(idTokenKey);
      clearLocal();
      tabs?.postMessage({ type: SIGNED_OUT_MESSAGE });
      if (!endLoginSession) return Promise.resolve();
      // A navigation, not a fetch: only a top-level request carries the SameSite=Lax session cookie
      // across sites. The hint may have expired; the login host accepts it for this.
      const state = randomToken();
      window.sessionStorage.setItem(signOutKey, state);
      const url = new URL(`${issuer}/end-session`);
      url.search = new URLSearchParams({
        client_id: clientKey,
        post_logout_redirect_uri: redirectUri,
        state,
        ...(idToken ? { id_token_hint: idToken } : {}),
      }).toString();
      window.location.assign(url.toString());
      // Never settles: code after `await signOut()` (a signIn() say) would race the navigation and
      // could reach the login host before the session has ended.
      return new Promise<void>(() => undefined);
    },

    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer, audience: clientKey, algorithms: ['RS256'] });
        return payload as EndUserClaims;
      } catch (cause) {
        const reason = cause instanceof joseErrors.JOSEError ? cause.code : 'ERR_INVALID';
        throw new InvalidTokenError(`the token does not verify: ${reason}`, { cause });
      }
    },

    async register(email, password) {
      const res = await fetch(`${identityApi}/api/auth/end-user/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ client_key: clientKey, email, password }),
        credentials: 'omit',
      });
      if (!res.ok) throw await readError(res);
      return (await res.json()) as RegisterResult;
    },

    authorizationHeader,

    async fetch(input, init) {
      // An expired token whose login session may still be live: a silent renewal first, not a sign-in.
      const session = client.getSession() ?? (readSession() ? await renew() : null);
      if (!session) throw new LoginRequiredError('no signed-in session');
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      headers.set('authorization', `Bearer ${session.token}`);
      const target = typeof input === 'string' && input.startsWith('/') ? `${identityApi}${input}` : input;
      const res = await fetch(target, { ...init, headers });
      if (res.status === 401) loginRequired();
      return res;
    },
  };

  if (tabs) {
    tabs.onmessage = (event: MessageEvent) => {
      if ((event.data as { type?: unknown } | null)?.type !== SIGNED_OUT_MESSAGE) return;
      clearLocal();
      options.onRequiresLogin?.();
    };
  }
  if (framed) {
    const params = new URLSearchParams(window.location.search);
    if (params.has('state')) handOffToParent();
  } else {
    const session = client.getSession();
    if (session) schedule(session);
  }
  return client;
}
