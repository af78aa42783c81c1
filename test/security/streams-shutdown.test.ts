import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { TcpProxy } from '../chaos/support/tcp-proxy';
import { DBHOST_VALID_TOKEN } from '../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { api, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { freePort, waitFor } from '../support/ports';
import { outboundAllowFor } from '../support/outbound';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres, throughProxy } from '../support/private-postgres';
import { Stack, STACK_TOKEN_CACHE_TTL_MS } from '../support/stack';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';

jest.setTimeout(120_000);

const GET = 'esign.resources.get-resource-information';
const DELETE = 'esign.authorizations.delete-user-authorization';
const WAIT = 'dbhost.operations.wait';
/** The seq column is a Postgres integer: one more than it holds. */
const BEYOND_SEQ = '2147483648';
/** Shaped like a real bearer token: whatever carries it must not end up in a log line. */
const tokenLike = () => `wes_${uniqueId('LEAK').replace(/-/g, '')}${'Q'.repeat(24)}`;

const logOf = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
const logLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);

/** A run of the shared stack that has ended, with its history. */
async function completedRun() {
  const id = await startRun(GET, { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN });
  const run = await waitForTerminal(id);
  expect(run.status).toBe('COMPLETED');
  return id;
}

/** A dbhost wait that keeps polling for minutes: a stream on it stays open. */
async function longRun(token = stackEnv.tokenA) {
  const connection = await api('/api/connections', {
    token,
    body: { plugin: 'dbhost', name: uniqueId('sec-dbhost'), secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: process.env.TEST_DBHOST_URL } },
  });
  expect(connection.status).toBe(201);
  return startRun(
    WAIT,
    { connection_uuid: connection.body.connection_uuid, dbhost_project_id: uniqueId('p'), dbhost_operation_id: uniqueId('never'), poll_interval: 1, timeout_seconds: 600 },
    token,
  );
}

/** The shared stack's CLI, as an operator runs it (auth.test.ts does the same). */
function cli(...args: string[]): string {
  const env = { ...process.env, PORT: '0' } as NodeJS.ProcessEnv;
  if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  else env.DATA_DIR = path.join(process.env.TEST_WORK_DIR!, 'data');
  return execFileSync(process.execPath, ['dist/src/cli.js', ...args], { env, encoding: 'utf8' });
}

describe('Last-Event-ID', () => {
  let id: string;
  beforeAll(async () => {
    id = await completedRun();
  });

  it(`${BEYOND_SEQ} (beyond the seq column) is past the end: only the end event, the stream closes, nothing fails in the log`, async () => {
    const before = logOf(stackEnv.logFile).length;
    const startedAt = Date.now();
    const stream = await readStream(id, { lastEventId: BEYOND_SEQ, timeoutMs: 15_000 });
    expect(stream.status).toBe(200);
    expect(stream.events.map((e) => e.event)).toEqual(['completed']);
    // The server closed it itself: the 5 s re-read never had to come into play.
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, 5_500));
    const failures = logLines(logOf(stackEnv.logFile).slice(before)).filter((l) => l.level >= 40 && JSON.stringify(l).includes(id));
    expect(failures).toEqual([]);
  });

  it('a huge one (400 digits) is past the end as well', async () => {
    const stream = await readStream(id, { lastEventId: '9'.repeat(400), timeoutMs: 15_000 });
    expect(stream.status).toBe(200);
    expect(stream.events.map((e) => e.event)).toEqual(['completed']);
    // Its id is the run's last seq, as for any end event, not the number the client sent.
    const full = await readStream(id, { timeoutMs: 15_000 });
    expect(stream.events[0].id).toBe(full.events.at(-1)!.id);
    expect(Number(stream.events[0].id)).toBeLessThan(100);
  });

  it.each([
    ['negative', '-1'],
    ['non-numeric', 'abc'],
    ['with a space inside', '1 2'],
    ['a float', '1.5'],
  ])('%s (%p) is a 422 naming the header and its rule, and opens no stream', async (_, value) => {
    const res = await api(`/api/workflows/${id}/stream`, { headers: { 'last-event-id': value, accept: 'text/event-stream' } });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'Last-Event-ID', rule: 'format:regex', message: expect.stringContaining('digits only') }],
    });
  });

  it('spaces around a seq are HTTP whitespace (dropped by the server): the stream resumes after it', async () => {
    // fetch would trim the value itself; node:http sends it as written.
    const text = await new Promise<string>((resolve, reject) => {
      const url = new URL(`${stackEnv.apiUrl}/api/workflows/${id}/stream`);
      http
        .get(url, { headers: { authorization: `Bearer ${stackEnv.tokenA}`, 'last-event-id': '  1  ' } }, (res) => {
          let body = `${res.statusCode}\n`;
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
    expect(text.split('\n')[0]).toBe('200');
    expect(text).toMatch(/^event: ?completed$/m);
    expect(text).not.toMatch(/^event: ?transition$/m);
  });

  it(`in the query (?lastEventId=${BEYOND_SEQ}, which the SSE library would read) it is ignored: the stream starts at seq 1`, async () => {
    const res = await fetch(`${stackEnv.apiUrl}/api/workflows/${id}/stream?lastEventId=${BEYOND_SEQ}&evs_last_event_id=${BEYOND_SEQ}`, {
      headers: { authorization: `Bearer ${stackEnv.tokenA}` },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^event: ?transition$/m);
    expect(text).toMatch(/^id: ?1$/m);
  });
});

describe('a revoked token', () => {
  it('revoked with the CLI while two of its streams are open: both get `revoked` and are closed within TOKEN_CACHE_TTL_MS', async () => {
    const created = JSON.parse(cli('token', 'create', '--org', stackEnv.orgA, '--name', uniqueId('streamer'), '--json'));
    const id = await longRun(created.token);
    const streams = [readStream(id, { token: created.token, timeoutMs: 30_000 }), readStream(id, { token: created.token, timeoutMs: 30_000 })];
    // Both are open and have seen the first transition (PENDING → WAITING_FOR_OPERATION).
    await waitFor('the run to start waiting', async () => ((await api(`/api/workflows/${id}`)).body.state_name === 'WAITING_FOR_OPERATION' ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(JSON.parse(cli('token', 'revoke', created.token_id, '--json'))).toEqual({ revoked: true });
    const revokedAt = Date.now();
    const ended = await Promise.all(streams);
    const closedAfter = Date.now() - revokedAt;
    for (const stream of ended) {
      expect(stream.status).toBe(200);
      const last = stream.events.at(-1)!;
      expect(last).toEqual({
        event: 'revoked',
        id: stream.events.at(-2)!.id,
        data: { error: { code: 'unauthorized', message: expect.stringContaining('revoked') } },
      });
      expect(stream.events.slice(0, -1).every((e) => e.event === 'transition')).toBe(true);
    }
    // The bound a new request has (the cache's TTL), plus the CLI's own start and the clients' reads.
    expect(closedAfter).toBeLessThan(STACK_TOKEN_CACHE_TTL_MS + 1_500);
    // The run itself goes on; a reconnect with the revoked token is refused.
    expect((await api(`/api/workflows/${id}`)).body.is_terminal).toBe(false);
    expect((await readStream(id, { token: created.token })).status).toBe(401);
  });
});

describe('shutdown', () => {
  const GRACE_MS = 1_500;
  /** SHUTDOWN_GRACE_MS + the 3 s the process gives itself after it, + 1.5 s for the test's own scheduling. */
  const EXIT_BOUND_MS = GRACE_MS + 3_000 + 1_500;
  let temporal: TemporalDevServer;
  let esign: Awaited<ReturnType<typeof startEsignDouble>>;
  let workDir: string;
  const stacks: Stack[] = [];

  beforeAll(async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-sec-shutdown-'));
    // A Temporal of its own: a second worker on the shared one would take the shared stack's tasks.
    // Its ports are picked free and bound a moment later: on a busy machine another process may take one first.
    for (let attempt = 1; !temporal; attempt++) {
      temporal = await startTemporalDevServer(path.join(workDir, 'temporal.log')).catch((err) => {
        if (attempt === 3) throw err;
        return undefined as unknown as TemporalDevServer;
      });
    }
    esign = await startEsignDouble();
  });
  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
    await esign?.close();
    await temporal?.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  const stackApi = (stack: Stack, route: string, init: RequestInit & { token: string }) =>
    fetch(stack.apiUrl + route, { ...init, headers: { authorization: `Bearer ${init.token}`, 'content-type': 'application/json' } });

  async function startOnStack(stack: Stack, token: string, initialData: Record<string, unknown>) {
    const res = await stackApi(stack, '/api/workflows/start', { token, method: 'POST', body: JSON.stringify({ workflow_type: DELETE, initial_data: initialData }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { workflow_id: string }).workflow_id;
  }

  async function providerCalled(fragment: string) {
    await waitFor('the provider call', async () => {
      const calls = (await (await fetch(`${new URL(esign.url).origin}/__calls`)).json()) as Array<{ path: string }>;
      return calls.some((c) => c.path.includes(fragment)) || undefined;
    }, 20_000, 50);
  }

  /** How long the process took to exit after SIGTERM; one still running well past the bound is SIGKILLed (and the test fails). */
  async function sigterm(stack: Stack, role: 'all' | 'worker') {
    const sentAt = Date.now();
    const exited = stack.kill(role, 'SIGTERM').then(() => Date.now() - sentAt);
    const overdue = new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), EXIT_BOUND_MS + 5_000).unref());
    const took = await Promise.race([exited, overdue]);
    if (took === Number.POSITIVE_INFINITY) await stack.kill(role, 'SIGKILL');
    return took;
  }

  it('with an activity stuck on a provider that never answers (and a stream open): the process exits within the grace period and its margin', async () => {
    const logFile = path.join(workDir, 'stuck.log');
    // PROVIDER_TIMEOUT_MS far away: the call really hangs for as long as anyone waits.
    const stack = new Stack({
      temporalAddress: temporal.address,
      dataDir: path.join(workDir, 'stuck-data'),
      logFile,
      outboundAllow: outboundAllowFor(esign.url),
      extraEnv: { SHUTDOWN_GRACE_MS: String(GRACE_MS), PROVIDER_TIMEOUT_MS: '600000' },
    });
    stacks.push(stack);
    await stack.start();
    const { token } = JSON.parse(stack.cli(['org', 'create', uniqueId('stuck'), '--json']));
    const authorizationid = uniqueId('hang');
    const id = await startOnStack(stack, token, { base_url: esign.url, api_token: ESIGN_VALID_TOKEN, accountid: '1', userid: 'u', authorizationid });
    await providerCalled(authorizationid);
    const stream = stackApi(stack, `/api/workflows/${id}/stream`, { token }).then((res) => res.text());

    const took = await sigterm(stack, stack.split ? 'worker' : 'all');
    expect(took).toBeLessThan(EXIT_BOUND_MS);
    expect(logOf(logFile)).toContain('"shutting down"');
    if (!stack.split) {
      // The API went down with it: its open stream was ended, not left hanging.
      await expect(stream).resolves.toEqual(expect.any(String));
    }
  });

  // A database the test can cut needs Postgres (CI has it; `make test` on a machine without
  // PostgreSQL binaries reports these as skipped, saying why, like the chaos tier's outage suite).
  if (!privatePostgresAvailable()) console.warn('streams-shutdown: no DATABASE_URL and no PostgreSQL binaries: the database-outage cases are skipped');
  (privatePostgresAvailable() ? describe : describe.skip)('on a database that stops answering', () => {
    let postgres: PrivatePostgres;
    const proxies: TcpProxy[] = [];
    beforeAll(async () => {
      postgres = await startPrivatePostgres();
    });
    afterAll(async () => {
      await Promise.all(proxies.map((p) => p.close()));
      await postgres?.stop();
    });

    /**
     * The CLI straight to the database: the proxy lives in this process, which a synchronous
     * child process would keep from forwarding anything.
     */
    const directCli = (env: NodeJS.ProcessEnv, ...args: string[]) =>
      JSON.parse(execFileSync(process.execPath, ['dist/src/cli.js', ...args], { env: { ...env, DATABASE_URL: postgres.url }, encoding: 'utf8' }));

    async function proxied() {
      const proxy = new TcpProxy(postgres.host, postgres.port);
      await proxy.start();
      proxies.push(proxy);
      return { proxy, url: throughProxy(postgres.url, proxy.port) };
    }

    it('SIGTERM while the projection cannot write (the database blackholed mid-run): the worker exits within the grace period and its margin', async () => {
      const { proxy, url } = await proxied();
      const logFile = path.join(workDir, 'projection.log');
      const stack = new Stack({
        temporalAddress: temporal.address,
        databaseUrl: url,
        dataDir: path.join(workDir, 'projection-data'),
        logFile,
        outboundAllow: outboundAllowFor(esign.url),
        extraEnv: { SHUTDOWN_GRACE_MS: String(GRACE_MS), DATABASE_QUERY_TIMEOUT_MS: '600000' },
      });
      stacks.push(stack);
      await stack.start();
      const { token } = directCli(stack.env(), 'org', 'create', uniqueId('blackhole'), '--json');
      // slow-…: the provider answers after 1 s, when the projection of that answer finds no database.
      const authorizationid = uniqueId('slow');
      await startOnStack(stack, token, { base_url: esign.url, api_token: ESIGN_VALID_TOKEN, accountid: '1', userid: 'u', authorizationid });
      await providerCalled(authorizationid);
      proxy.blackhole();
      await new Promise((r) => setTimeout(r, 1_500));

      const took = await sigterm(stack, 'worker');
      expect(took).toBeLessThan(EXIT_BOUND_MS);
      expect(logOf(logFile)).toContain('"shutting down"');
    });

    it('a 5xx for a request carrying a token-like value in its path and query: the request line and the error line name the route, never the values', async () => {
      const { proxy, url } = await proxied();
      const extra = new ExtraApi({ TOKEN_CACHE_TTL_MS: '600000', DATABASE_QUERY_TIMEOUT_MS: '1000' });
      extra.env.DATABASE_URL = url;
      try {
        await extra.start();
        const { token } = directCli(extra.env, 'org', 'create', uniqueId('logs'), '--json');
        // Resolved now, so the token is answered from the cache once the database is gone.
        expect((await fetch(`${extra.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
        await proxy.cut();
        const inPath = tokenLike();
        const inQuery = tokenLike();
        const res = await fetch(`${extra.url}/api/workflows/${inPath}/history?access_token=${inQuery}`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(503);
        expect(((await res.json()) as any).error.code).toBe('database_unavailable');

        const lines = await waitFor('both log lines', async () => {
          const all = logLines(extra.output);
          const errorLine = all.find((l) => l.msg === 'request failed');
          const requestLine = all.find((l) => l.res?.statusCode === 503);
          return errorLine && requestLine ? { errorLine, requestLine } : undefined;
        }, 10_000, 100);
        expect(lines.errorLine).toMatchObject({ method: 'GET', route: '/api/workflows/:id/history', err: { type: 'DrizzleQueryError', query: expect.stringMatching(/^select /) } });
        expect(lines.requestLine).toMatchObject({ req: { method: 'GET' }, route: '/api/workflows/:id/history' });
        for (const value of [inPath, inQuery, token]) expect(extra.output).not.toContain(value);
      } finally {
        await extra.stop();
      }
    });
  });
});

describe('local state', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  /**
   * What another user could open under `dir`: a path whose directories up from `dir` all let
   * others through and that lets them read or write it, with its mode. PGlite writes its files
   * 0666 whatever the umask (its file system is emulated), so they rely on their directories.
   */
  function reachableByOthers(dir: string): string[] {
    const found: string[] = [];
    const visit = (p: string, through: boolean) => {
      const stat = fs.lstatSync(p);
      const mode = stat.mode & 0o777;
      if (through && (mode & 0o066) !== 0) found.push(`${path.relative(dir, p) || '.'} ${mode.toString(8)}`);
      if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) visit(path.join(p, entry), through && (mode & 0o011) !== 0);
    };
    visit(dir, true);
    return found;
  }

  /** Every directory under `dir` (itself included) that is not 0700. */
  function openDirectories(dir: string): string[] {
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory()) return [];
    const own = (stat.mode & 0o777) === 0o700 ? [] : [`${dir} ${(stat.mode & 0o777).toString(8)}`];
    return [...own, ...fs.readdirSync(dir).flatMap((e) => openDirectories(path.join(dir, e)))];
  }

  const modeOf = (p: string) => (fs.lstatSync(p).mode & 0o777).toString(8);

  /** An API on PGlite under make up's settings (generated key, dev token, admin socket) in `dataDir`. */
  async function devApi(dataDir: string) {
    const extra = new ExtraApi({ DEV_BOOTSTRAP: '1' });
    delete extra.env.DATABASE_URL;
    delete extra.env.ENGINE_SECRET_KEY;
    extra.env.DATA_DIR = dataDir;
    await extra.start();
    await waitFor('the dev token', async () => fs.existsSync(path.join(dataDir, 'dev-token')) || undefined, 20_000, 100);
    return extra;
  }

  it('a new DATA_DIR: the directory, the key, the dev token, every PGlite file and the admin socket are the owner\'s alone', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-sec-data-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    const extra = await devApi(dataDir);
    try {
      for (const name of ['secret.key', 'dev-token', 'pglite', 'admin.sock']) expect(fs.existsSync(path.join(dataDir, name))).toBe(true);
      expect(fs.readdirSync(path.join(dataDir, 'pglite')).length).toBeGreaterThan(0);
      expect(openDirectories(dataDir)).toEqual([]);
      expect(['secret.key', 'dev-token', 'admin.sock'].map((f) => `${f} ${modeOf(path.join(dataDir, f))}`)).toEqual([
        'secret.key 600',
        'dev-token 600',
        'admin.sock 600',
      ]);
      expect(reachableByOthers(dataDir)).toEqual([]);
      // The CLI through the admin socket adds nothing others could reach either.
      JSON.parse(extra.cli(['org', 'create', uniqueId('cli'), '--json']));
      expect(openDirectories(dataDir)).toEqual([]);
      expect(reachableByOthers(dataDir)).toEqual([]);
    } finally {
      await extra.stop();
    }
  });

  it('an existing DATA_DIR left world-readable (with world-readable files) is tightened at start, and the CLI opening PGlite itself keeps it so', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-sec-data-'));
    dirs.push(dataDir);
    fs.chmodSync(dataDir, 0o777);
    fs.writeFileSync(path.join(dataDir, 'left-over'), 'x', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'left-over'), 0o644);
    const extra = await devApi(dataDir);
    try {
      expect(openDirectories(dataDir)).toEqual([]);
      // The file an older version left keeps its mode, behind a directory only the owner can enter.
      expect(modeOf(path.join(dataDir, 'left-over'))).toBe('644');
      expect(reachableByOthers(dataDir)).toEqual([]);
    } finally {
      await extra.stop();
    }
    fs.chmodSync(dataDir, 0o755);
    fs.rmSync(path.join(dataDir, 'admin.sock'), { force: true });
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(await freePort()) };
    JSON.parse(execFileSync(process.execPath, ['dist/src/cli.js', 'org', 'create', uniqueId('offline'), '--json'], { env, encoding: 'utf8' }));
    expect(openDirectories(dataDir)).toEqual([]);
    expect(reachableByOthers(dataDir)).toEqual([]);
  });
});

describe('request log lines', () => {
  it('name the route and the method, never the path values or the query string (a 404 and a 2xx/4xx on the shared stack)', async () => {
    // An organization of its own: its lines are told apart from those of suites running alongside.
    const org = JSON.parse(cli('org', 'create', uniqueId('logs'), '--json'));
    const inPath = tokenLike();
    const inQuery = tokenLike();
    const before = logOf(stackEnv.logFile).length;
    expect((await api(`/api/workflows/${inPath}?access_token=${inQuery}`, { token: org.token })).status).toBe(404);
    expect((await api(`/api/workflows?limit=1&x=${inQuery}`, { token: org.token })).status).toBeLessThan(500);
    const lines = await waitFor('the request lines', async () => {
      const found = logLines(logOf(stackEnv.logFile).slice(before)).filter((l) => l.req && l.organization_uuid === org.organization_uuid);
      return found.length >= 2 ? found : undefined;
    });
    expect(lines.map((l) => ({ req: l.req, route: l.route, status: l.res.statusCode }))).toEqual([
      { req: { method: 'GET' }, route: '/api/workflows/:id', status: 404 },
      { req: { method: 'GET' }, route: '/api/workflows', status: expect.any(Number) },
    ]);
    expect(logOf(stackEnv.logFile).slice(before)).not.toContain(inPath);
    expect(logOf(stackEnv.logFile).slice(before)).not.toContain(inQuery);
  });
});
