import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { INestApplication } from '@nestjs/common';
import { ConnectionStore } from '../../activities/connections';
import { HookStore } from '../../activities/hooks/store';
import { createIdentityActivities } from '../../activities/identity';
import { MasterPayloadKeys } from '../../activities/payload-keys';
import { SecretBox } from '../../activities/secret-box';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { endUsers } from '../../db/schema';
import { createApi } from '../../src/api';
import { createOrganization } from '../../src/auth/org-tokens';
import { loadConfig } from '../../src/config';
import { Identity } from '../../src/identity/identity';
import { createLoginHost } from '../../src/identity/login-host';
import { createLoginSession, LoginSessionCookie, sessionIdOf } from '../../src/identity/login-sessions';
import { createLogger } from '../../src/logger';
import { TemporalClients } from '../../src/temporal-clients';
import { freePort } from './ports';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export const newPkce = (): Pkce => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/**
 * The API and the login host in this process, on a PGlite of their own, so a test can seed apps,
 * end users and login sessions directly (through src/identity/login-sessions.ts, as the sign-in
 * form does). Temporal is never reached: nothing here starts a run.
 */
export class IdentityHarness {
  apiUrl = '';
  loginUrl = '';
  private constructor(
    readonly database: DatabaseHandle,
    readonly identity: Identity,
    private readonly apps: INestApplication[],
    private readonly dir: string,
  ) {}

  get db() {
    return this.database.db;
  }

  static async start(env: Record<string, string> = {}): Promise<IdentityHarness> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-identity-'));
    const [port, loginPort] = [await freePort(), await freePort()];
    const config = loadConfig({ DATA_DIR: dir, PORT: String(port), LOGIN_PORT: String(loginPort), LOG_LEVEL: 'silent', ...env });
    const database = await openDatabase({ pgliteDir: path.join(dir, 'pglite') });
    await database.migrate();
    const masterKey = randomBytes(32);
    const identity = new Identity(config.identity, database.db, masterKey);
    const deps = {
      config,
      logger: createLogger('silent'),
      database,
      temporal: new TemporalClients(Connection.lazy({ address: '127.0.0.1:1' }), 'default', new MasterPayloadKeys(masterKey)),
      connections: new ConnectionStore(database.db, SecretBox.derive(masterKey, 'connections')),
      hooks: new HookStore(database.db, SecretBox.derive(masterKey, 'hook-secrets')),
      identity,
      masterKey,
    };
    const api = await createApi(deps);
    const login = await createLoginHost(deps);
    await api.listen(port, '127.0.0.1');
    await login.listen(loginPort, '127.0.0.1');
    const harness = new IdentityHarness(database, identity, [api, login], dir);
    harness.apiUrl = `http://127.0.0.1:${port}`;
    harness.loginUrl = config.identity.loginUrl;
    return harness;
  }

  async stop() {
    for (const app of this.apps) await app.close();
    await this.database.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  createOrg(name = 'org') {
    return createOrganization(this.db, `${name}-${randomBytes(3).toString('hex')}`);
  }

  provisionApp(organizationUuid: string, redirectUris: string[], name = 'app') {
    return createIdentityActivities(this.db, { loginUrl: this.loginUrl, apiUrl: this.apiUrl }).provisionApp({ organization_uuid: organizationUuid, provision_key: randomUUID(), name, redirect_uris: redirectUris });
  }

  async createEndUser(app: { client_uuid: string }, organizationUuid: string) {
    const endUserUuid = randomUUID();
    const email = `user-${randomBytes(4).toString('hex')}@example.test`;
    await this.db.insert(endUsers).values({
      endUserUuid,
      organizationUuid,
      clientUuid: app.client_uuid,
      email,
      emailVerifiedAt: new Date(),
      passwordHash: 'not-used-here',
    });
    return { end_user_uuid: endUserUuid, email };
  }

  /** What the sign-in form does on success: a session row and its cookie. */
  async signIn(user: { end_user_uuid: string }, app: { client_uuid: string }, organizationUuid: string) {
    const { sid } = await createLoginSession(this.db, { end_user_uuid: user.end_user_uuid, client_uuid: app.client_uuid, organization_uuid: organizationUuid });
    return { cookie: `${new LoginSessionCookie(this.loginUrl).name(app.client_uuid)}=${sid}`, sid: sessionIdOf(sid) };
  }

  /** GET {login}/authorize without following the redirect. */
  async authorize(params: Record<string, string>, cookie?: string) {
    const url = `${this.loginUrl}/authorize?${new URLSearchParams(params)}`;
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    return { status: res.status, location: res.headers.get('location'), body: await res.text(), headers: res.headers };
  }

  /** A code for a signed-in user, through /authorize. */
  async code(clientKey: string, redirectUri: string, cookie: string, pkce: Pkce = newPkce(), extra: Record<string, string> = {}) {
    const res = await this.authorize(
      { client_id: clientKey, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra },
      cookie,
    );
    if (res.status !== 302 || !res.location) throw new Error(`authorize answered ${res.status}: ${res.body}`);
    const code = new URL(res.location).searchParams.get('code');
    if (!code) throw new Error(`authorize redirected without a code: ${res.location}`);
    return { code, pkce };
  }

  /** The form-encoded token request of RFC 6749 §4.1.3. */
  async formToken(fields: Record<string, string>) {
    const res = await fetch(`${this.loginUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async jsonToken(body: Record<string, unknown>) {
    const res = await fetch(`${this.apiUrl}/api/auth/end-user/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async api(pathname: string, token: string, init: { method?: string; body?: unknown } = {}) {
    const res = await fetch(`${this.apiUrl}${pathname}`, {
      method: init.method ?? (init.body ? 'POST' : 'GET'),
      headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, body };
  }
}
