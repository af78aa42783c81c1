import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { api, startRun, waitForTerminal } from './api';
import { waitFor } from './ports';

/** The login host of the integration stack. */
export const loginUrl = () => process.env.TEST_LOGIN_URL!;

/** Where the stack writes mail without SMTP_URL: DATA_DIR/outbox. */
export const outboxDir = () => path.join(process.env.TEST_WORK_DIR!, 'data', 'outbox');

export interface ProvisionedApp {
  client_key: string;
  client_uuid: string;
  redirect_uri: string;
}

let appCount = 0;
export async function provisionApp(name = `Accounts test app ${++appCount}`): Promise<ProvisionedApp> {
  const redirect_uri = `http://127.0.0.1:9/callback/${appCount}`;
  const run = await waitForTerminal(await startRun('identity.app.provision', { name, redirect_uris: [redirect_uri] }));
  if (run.status !== 'COMPLETED') throw new Error(`provision ended ${run.status}: ${JSON.stringify(run.state_data)}`);
  return { client_key: run.state_data.client_key, client_uuid: run.state_data.client_uuid, redirect_uri };
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]);

/** The hidden inputs of the form posting to `action` in a page. */
export function hiddenFields(page: string, action: string): Record<string, string> {
  const form = page.match(new RegExp(`<form method="post" action="${action}">([\\s\\S]*?)</form>`));
  if (!form) throw new Error(`no form posting to ${action} in:\n${page}`);
  const fields: Record<string, string> = {};
  for (const m of form[1].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(m[1])] = unescape(m[2]);
  return fields;
}

export interface PageResponse {
  status: number;
  body: string;
  headers: Headers;
  location: string | null;
}

/**
 * A browser without JavaScript: keeps the login host's cookies, posts forms url-encoded, does not
 * follow redirects (tests look at them). `localAddress` makes it a different client address
 * (127.0.0.x all reach the loopback listener), so throttling tests do not lock each other out.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  private readonly dispatcher: Agent;

  constructor(localAddress?: string) {
    this.dispatcher = new Agent(localAddress ? { localAddress } : {});
    open.add(this);
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<PageResponse> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const target = url.startsWith('http') ? url : loginUrl() + url;
    const res = await fetch(target, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual', dispatcher: this.dispatcher });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
    return { status: res.status, body: await res.text(), headers: res.headers as unknown as Headers, location: res.headers.get('location') };
  }

  get(url: string) {
    return this.request(url);
  }

  /** Posts the form at `action` of `page` with its hidden fields and these visible ones. */
  submit(page: string, action: string, fields: Record<string, string>) {
    return this.request(action, { form: { ...hiddenFields(page, action), ...fields } });
  }

  async close() {
    open.delete(this);
    await this.dispatcher.close();
  }
}

const open = new Set<Browser>();

/** For afterAll: their keep-alive connections would hold jest open. */
export const closeBrowsers = () => Promise.all([...open].map((b) => b.close()));

/** Quoted-printable soft breaks and escapes undone (nodemailer wraps long lines). */
const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));

export interface Mail {
  file: string;
  raw: string;
  subject: string;
  body: string;
}

export function mailsTo(address: string, dir = outboxDir()): Mail[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .sort()
    .map((file) => ({ file, raw: fs.readFileSync(path.join(dir, file), 'utf8') }))
    .filter(({ raw }) => new RegExp(`^To: ${address.replace(/[.+]/g, '\\$&')}$`, 'mi').test(raw))
    .map(({ file, raw }) => {
      const split = raw.indexOf('\n\n');
      const headers = raw.slice(0, split);
      const transferEncoding = headers.match(/^Content-Transfer-Encoding: (.+)$/im)?.[1].trim().toLowerCase();
      const body = raw.slice(split + 2);
      return {
        file,
        raw,
        subject: headers.match(/^Subject: (.+)$/m)?.[1] ?? '',
        body: transferEncoding === 'quoted-printable' ? decodeQuotedPrintable(body) : body,
      };
    });
}

/** The newest link to `path` mailed to `address` after `skip` earlier messages (`dir`: another stack's outbox). */
export async function waitForLink(address: string, linkPath: string, skip = 0, dir = outboxDir()): Promise<URL> {
  return waitFor(`a mail with a ${linkPath} link to ${address}`, async () => {
    const mail = mailsTo(address, dir).slice(skip).find((m) => m.body.includes(linkPath));
    const link = mail?.body.match(/https?:\/\/\S+/)?.[0];
    return link ? new URL(link) : undefined;
  }, 20_000);
}

let emailCount = 0;
export const uniqueEmail = (label = 'user') => `${label}-${Date.now().toString(36)}-${++emailCount}@example.com`;

/** The parameters an app's /authorize link carries, as the login host hands them to /sign-in. */
export function authorizeParams(app: ProvisionedApp, verifier = randomBytes(32).toString('base64url')) {
  return {
    verifier,
    query: {
      client_id: app.client_key,
      redirect_uri: app.redirect_uri,
      response_type: 'code',
      scope: 'openid email',
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    },
  };
}

export const signInPath = (query: Record<string, string>) => `/sign-in?${new URLSearchParams(query)}`;

/** A registered account whose email was verified through the link in its outbox mail. */
export async function verifiedAccount(app: ProvisionedApp, password: string, email = uniqueEmail()): Promise<string> {
  const created = await api('/api/auth/end-user/register', { token: null, body: { client_key: app.client_key, email, password } });
  if (created.status !== 201) throw new Error(`register answered ${created.status}`);
  const link = await waitForLink(email, '/verify-email');
  const verified = await api('/api/auth/end-user/verify-email', { token: null, body: { token: link.searchParams.get('token') } });
  if (verified.status !== 200) throw new Error(`verify-email answered ${verified.status}`);
  return email;
}

/** An end-user bearer token through the whole code flow: sign-in form, /authorize, token endpoint. */
export async function endUserToken(app: ProvisionedApp, browser: Browser, email: string, password: string): Promise<string> {
  const { query, verifier } = authorizeParams(app);
  const form = await browser.get(signInPath(query));
  const answer = await browser.submit(form.body, '/sign-in', { email, password });
  if (answer.status !== 302) throw new Error(`sign-in answered ${answer.status}`);
  const authorized = await browser.get(answer.location!);
  const code = new URL(authorized.location!).searchParams.get('code');
  const token = await api('/api/auth/end-user/token', { token: null, body: { code, code_verifier: verifier } });
  if (token.status !== 200) throw new Error(`token exchange answered ${token.status}`);
  return token.body.token as string;
}
