import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { listen, type Listening } from '../support/browser-auth';

/**
 * A loopback stand-in for the login host and the API's end-user routes, speaking the wire format of
 * issue 11, for the browser SDK's unit tests (the end-to-end test uses the real service):
 * login origin   GET /authorize → 302 to redirect_uri with code, state and iss (no sign-in page:
 *                the user counts as signed in); prompt=none follows `promptNone`. GET /end-session →
 *                302 to post_logout_redirect_uri with state (nothing checked: the real one is tested
 *                in test/security/identity-end-session.test.ts).
 * API origin     POST /api/auth/end-user/token {code, code_verifier} (S256 checked, single use),
 *                GET /api/auth/end-user/jwks, POST /api/auth/end-user/register,
 *                POST /api/workflows/start and GET /api/workflows/{id}/stream (a two-transition run) for
 *                tokens it issued, with CORS for any origin.
 * Knobs let a test forge what a hostile or broken login host would send back.
 */
export interface DoubleRequest {
  origin: 'login' | 'api';
  method: string;
  url: string;
  authorization: string | null;
  body: string;
}

export class LoginHostDouble {
  login!: Listening;
  api!: Listening;
  readonly requests: DoubleRequest[] = [];
  /** What `prompt=none` answers: a code, `error=login_required`, or a page that never redirects (posting a forged code to its parent). */
  promptNone: 'code' | 'login_required' | 'hang' = 'code';
  /** Replaces the state sent back to the redirect URI. */
  stateOverride: string | undefined;
  /** Replaces the iss sent back (null: no iss at all). */
  issOverride: string | null | undefined;
  ttlSeconds = 600;
  readonly sid = randomUUID();
  readonly endUserUuid = randomUUID();
  readonly email = 'ada@example.test';
  issued: string[] = [];
  /** The ID tokens issued beside `issued`, in the same order. */
  idTokens: string[] = [];
  private readonly codes = new Map<string, { challenge: string; clientKey: string }>();
  private keys: Array<{ kid: string; privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; publicJwk: JWK }> = [];

  get issuer() {
    return this.login.url;
  }

  async start(): Promise<this> {
    await this.rotate();
    this.login = await listen((req, res) => void this.onLogin(req, res));
    this.api = await listen((req, res) => void this.onApi(req, res));
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all([this.login?.close(), this.api?.close()]);
  }

  /** A new signing key, served first in the JWKS; tokens signed with the old one stay verifiable. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const kid = `k${this.keys.length + 1}-${randomBytes(4).toString('hex')}`;
    this.keys.unshift({ kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } });
    return kid;
  }

  async sign(claims: Record<string, unknown> = {}, audience?: string): Promise<string> {
    const key = this.keys[0];
    return new SignJWT({ email: this.email, sid: this.sid, org: 'org-1', app: 'app-1', token_type: 'end_user', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : this.issuer)
      .setSubject(this.endUserUuid)
      .setAudience(audience ?? 'unset')
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(Math.floor(Date.now() / 1000) + this.ttlSeconds)
      .sign(key.privateKey);
  }

  count(filter: (r: DoubleRequest) => boolean): number {
    return this.requests.filter(filter).length;
  }

  silentAuthorizes(): number {
    return this.count(
      (r) => r.origin === 'login' && r.url.startsWith('/authorize') && new URL(r.url, 'http://x').searchParams.get('prompt') === 'none',
    );
  }

  tokenExchanges(): number {
    return this.count((r) => r.url === '/api/auth/end-user/token' && r.method === 'POST');
  }

  private async record(origin: DoubleRequest['origin'], req: http.IncomingMessage): Promise<DoubleRequest> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const entry = { origin, method: req.method ?? 'GET', url: req.url ?? '/', authorization: req.headers.authorization ?? null, body };
    this.requests.push(entry);
    return entry;
  }

  private async onLogin(req: http.IncomingMessage, res: http.ServerResponse) {
    const { url } = await this.record('login', req);
    const query = new URL(url, this.issuer).searchParams;
    if (url.startsWith('/end-session?')) {
      const back = new URL(query.get('post_logout_redirect_uri') ?? '');
      back.searchParams.set('state', query.get('state') ?? '');
      return void res.writeHead(302, { location: back.toString() }).end();
    }
    if (!url.startsWith('/authorize')) return void res.writeHead(404).end();
    const redirect = new URL(query.get('redirect_uri') ?? '');
    const back = (params: Record<string, string>) => {
      const iss = this.issOverride === undefined ? this.issuer : this.issOverride;
      for (const [k, v] of Object.entries({ ...params, state: this.stateOverride ?? query.get('state') ?? '' }))
        redirect.searchParams.set(k, v);
      if (iss !== null) redirect.searchParams.set('iss', iss);
      res.writeHead(302, { location: redirect.toString() }).end();
    };
    if (query.get('prompt') === 'none' && this.promptNone === 'login_required') return back({ error: 'login_required' });
    if (query.get('prompt') === 'none' && this.promptNone === 'hang') {
      // Sent from the frame itself, but from the login origin: the parent must ignore it.
      const forged = JSON.stringify({
        type: 'wfe-auth:renew-callback',
        search: `?code=forged&state=${query.get('state')}&iss=${this.issuer}`,
      });
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><title>wait</title><script>setInterval(() => parent.postMessage(${forged}, '*'), 100)</script>`);
    }
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, { challenge: query.get('code_challenge') ?? '', clientKey: query.get('client_key') ?? '' });
    back({ code });
  }

  private async onApi(req: http.IncomingMessage, res: http.ServerResponse) {
    const cors = {
      'access-control-allow-origin': req.headers.origin ?? '*',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-allow-methods': 'GET, POST',
    };
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    const { url, body } = await this.record('api', req);
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (url === '/api/auth/end-user/jwks') return json(200, { keys: this.keys.map((k) => k.publicJwk) });
    if (url === '/api/auth/end-user/token') {
      const { code, code_verifier: verifier } = JSON.parse(body || '{}') as { code?: string; code_verifier?: string };
      const grant = code ? this.codes.get(code) : undefined;
      if (code) this.codes.delete(code);
      if (!grant || !verifier || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) {
        return json(400, { error: 'invalid_grant', error_description: 'the code or its verifier is not valid' });
      }
      const token = await this.sign({}, grant.clientKey);
      const idToken = await this.sign({ token_type: undefined, org: undefined, app: undefined }, grant.clientKey);
      this.issued.push(token);
      this.idTokens.push(idToken);
      return json(200, { token, token_type: 'Bearer', expires_in: this.ttlSeconds, id_token: idToken });
    }
    if (url === '/api/auth/end-user/register') {
      const { email } = JSON.parse(body || '{}') as { email?: string };
      if (email?.startsWith('taken@'))
        return json(409, { error: { code: 'email_taken', message: 'this email is registered', details: [] } });
      return json(201, { end_user_uuid: randomUUID(), email_verification: 'sent' });
    }
    if (url.startsWith('/api/workflows/') && !this.issued.some((t) => req.headers.authorization === `Bearer ${t}`)) {
      return json(401, { error: { code: 'unauthorized', message: 'a bearer token is required', details: [] } });
    }
    if (url === '/api/workflows/start') return json(201, { workflow_id: `wf_${randomUUID()}`, state_name: 'PENDING', is_terminal: false });
    if (/^\/api\/workflows\/wf_[^/]+\/stream$/.test(url)) {
      // The run API's stream wire format: transition events (id = seq), then completed.
      res.writeHead(200, { ...cors, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const steps = [
        ['PENDING', 'RUNNING', 'start'],
        ['RUNNING', 'COMPLETED', 'finish'],
      ];
      for (const [i, [from, to, action]] of steps.entries()) {
        res.write(
          `event: transition\nid: ${i + 1}\ndata: ${JSON.stringify({ seq: i + 1, from, to, action, at: new Date().toISOString() })}\n\n`,
        );
        await new Promise((r) => setTimeout(r, 150));
      }
      return void res.end(`event: completed\ndata: ${JSON.stringify({ state_data: { ok: true } })}\n\n`);
    }
    json(404, { error: { code: 'not_found', message: 'not found', details: [] } });
  }
}
