import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DBHOST_VALID_TOKEN } from '../../doubles/dbhost-double';
import { outboundAllowFor } from '../../support/outbound';
import { Stack } from '../../support/stack';
import { createTestDatabase } from '../../support/test-database';
import { type ChaosProvider, startChaosProvider } from './provider';
import { TcpProxy } from './tcp-proxy';
import { PersistentTemporal } from './temporal';

type Role = 'api' | 'worker' | 'all';

/** One thing the suite did to the stack, with when it began and when the stack was whole again. */
export interface Disruption {
  kind: 'worker-kill' | 'api-kill' | 'temporal-restart' | 'database-cut';
  from: number;
  to: number;
}

export interface HttpResult<T = any> {
  /** 0 when there was no HTTP answer (connection refused or reset). */
  status: number;
  body: T;
  ms: number;
  /** No answer within the request's time-out: the hang detector fired. */
  hung: boolean;
  error?: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const uid = () => randomUUID().replace(/-/g, '').slice(0, 12);
export const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

/**
 * A whole stack of its own for one chaos suite, so it can be abused without
 * hurting any other suite: a Temporal dev server persisted to a file
 * (restartable), a fresh database (Postgres behind a TCP proxy the suite can
 * cut when DATABASE_URL is set, else PGlite), the compiled API and worker as
 * child processes (separate on Postgres, one `all` process on PGlite), the
 * recording provider, an organization and a dbhost connection.
 */
export class ChaosStack {
  readonly workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-chaos-'));
  readonly logFile = path.join(this.workDir, 'service.log');
  readonly temporal = new PersistentTemporal(path.join(this.workDir, 'temporal.db'), path.join(this.workDir, 'temporal.log'));
  readonly disruptions: Disruption[] = [];
  /** Runs earlier tests of the suite started and checked. */
  readonly knownRuns = new Set<string>();
  proxy?: TcpProxy;
  provider!: ChaosProvider;
  stack!: Stack;
  token = '';
  organization = '';
  dbhostConnection = '';
  private database?: { url: string; drop(): Promise<void> };
  private keep = Boolean(process.env.KEEP_TEST_DATA);
  /** Set when the suite ends: stream clients and waits stop. */
  closed = false;
  /** Roles the suite is killing or restarting right now (not a crash when they are down). */
  private readonly handling = new Set<Role>();

  get split() {
    return this.stack.split;
  }
  get apiUrl() {
    return this.stack.apiUrl;
  }
  /** The process that runs the worker (on PGlite it is also the API). */
  get workerRole(): Role {
    return this.split ? 'worker' : 'all';
  }
  /** The process that serves the API (on PGlite it is also the worker). */
  get apiRole(): Role {
    return this.split ? 'api' : 'all';
  }

  async start(name: string): Promise<void> {
    await this.temporal.start();
    let databaseUrl: string | undefined;
    if (process.env.DATABASE_URL) {
      this.database = await createTestDatabase(process.env.DATABASE_URL);
      const target = new URL(this.database.url);
      this.proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      await this.proxy.start();
      const viaProxy = new URL(this.database.url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(this.proxy.port);
      databaseUrl = viaProxy.toString();
    }
    this.provider = await startChaosProvider();
    this.stack = new Stack({
      temporalAddress: this.temporal.address,
      databaseUrl,
      dataDir: path.join(this.workDir, 'data'),
      logFile: this.logFile,
      outboundAllow: outboundAllowFor(this.provider.esignUrl),
      extraEnv: {
        // The limits have their own suite: here they would only turn load into 429s.
        RATE_LIMIT_STARTS_PER_MINUTE_ORG: '0',
        RATE_LIMIT_STARTS_PER_MINUTE_TOKEN: '0',
        RATE_LIMIT_READS_PER_MINUTE_ORG: '0',
        RATE_LIMIT_READS_PER_MINUTE_TOKEN: '0',
        RATE_LIMIT_STARTS_PER_MINUTE_APP: '0',
        RATE_LIMIT_READS_PER_MINUTE_APP: '0',
        SSE_MAX_STREAMS_PER_TOKEN: '0',
      },
    });
    await this.stack.start();
    const org = JSON.parse(await this.cli(['org', 'create', `chaos-${name}`, '--json']));
    this.token = org.token;
    this.organization = org.organization_uuid;
    const connection = await this.request('/api/connections', {
      body: { plugin: 'dbhost', name: 'chaos', secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: this.provider.dbhostUrl } },
    });
    if (connection.status !== 201) throw new Error(`connection create answered ${connection.status}: ${JSON.stringify(connection.body)}`);
    this.dbhostConnection = connection.body.connection_uuid;
  }

  /**
   * The real CLI, run asynchronously: Stack.cli blocks this process, which on
   * Postgres also carries the database proxy, so it would wait on itself.
   */
  cli(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [path.join(this.stack.root, 'dist', 'src', 'cli.js'), ...args], { cwd: this.stack.root, env: this.stack.env() }, (err, stdout, stderr) =>
        err ? reject(new Error(`cli ${args.join(' ')}: ${err.message} ${stderr}`)) : resolve(stdout),
      );
    });
  }

  async stop(): Promise<void> {
    this.closed = true;
    if (this.stack) {
      // A graceful stop that does not finish is a finding, not a reason to hang the suite.
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        this.stack.stop().then(() => true, () => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 15_000))),
      ]);
      clearTimeout(timer);
      if (!stopped) {
        const stuck = (['api', 'worker', 'all'] as const).filter((role) => this.alive(role));
        process.stdout.write(`\nchaos: ${stuck.join(', ')} still running 15 s after SIGTERM; SIGKILL\n`);
        await Promise.all(stuck.map((role) => this.stack.kill(role, 'SIGKILL')));
      }
    }
    await this.temporal.stop().catch(() => undefined);
    await this.provider?.close().catch(() => undefined);
    await this.proxy?.close().catch(() => undefined);
    await this.database?.drop().catch(() => undefined);
    if (!this.keep) fs.rmSync(this.workDir, { recursive: true, force: true });
  }

  /** SIGKILLs a role; the returned function restarts it and records the disruption. */
  async kill(role: Role, kind: Disruption['kind']): Promise<() => Promise<void>> {
    const from = Date.now();
    this.handling.add(role);
    await this.stack.kill(role, 'SIGKILL');
    return async () => {
      await this.stack.startRole(role);
      this.handling.delete(role);
      this.disruptions.push({ kind, from, to: Date.now() });
    };
  }

  /**
   * Service processes that exited without the suite killing them (a crash):
   * nothing restarts them, so their runs would never end.
   */
  crashed(): Role[] {
    return (this.split ? (['api', 'worker'] as const) : (['all'] as const)).filter((role) => !this.handling.has(role) && !this.alive(role));
  }

  /** Fails the test at once, with the log's account of it, when a service process crashed. */
  assertNoCrash(scenario: string): void {
    const crashed = this.crashed();
    if (!crashed.length) return;
    const line = `chaos: ${scenario}: the ${crashed.join(' and ')} process exited on its own (nothing killed it): ${this.crashReport()}`;
    process.stdout.write(`\n${line}\n`);
    throw new Error(line);
  }

  /** What the service log says about a crash (an uncaught error's first lines). */
  crashReport(): string {
    try {
      const log = fs.readFileSync(this.logFile, 'utf8');
      const at = log.search(/^(Error|TypeError|node:|Uncaught|.*Unhandled)/m);
      return at < 0 ? '(no uncaught error in the log)' : log.slice(at, at + 900);
    } catch {
      return '';
    }
  }

  /** Whether a role's process is still running (nobody restarted it behind the suite's back). */
  alive(role: Role): boolean {
    const child = (this.stack as unknown as { children: Map<Role, { exitCode: number | null; signalCode: string | null }> }).children.get(role);
    return Boolean(child && child.exitCode === null && !child.signalCode);
  }

  async restartTemporal(signal: 'SIGTERM' | 'SIGKILL', downMs: number): Promise<void> {
    const from = Date.now();
    await this.temporal.restart(signal, downMs);
    this.disruptions.push({ kind: 'temporal-restart', from, to: Date.now() });
  }

  /** An API request that never hangs the suite: `timeoutMs` is the hang detector. */
  async request<T = any>(
    urlPath: string,
    options: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number; token?: string | null } = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? this.token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const t0 = Date.now();
    try {
      const res = await fetch(this.apiUrl + urlPath, {
        method: options.method ?? (options.body !== undefined ? 'POST' : 'GET'),
        headers,
        body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: body as T, ms: Date.now() - t0, hung: false };
    } catch (err) {
      const name = (err as Error).name;
      const hung = name === 'TimeoutError' || name === 'AbortError';
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return { status: 0, body: undefined as T, ms: Date.now() - t0, hung, error: cause?.code ?? cause?.message ?? (err as Error).message };
    }
  }

  /**
   * Starts a run through the API with an Idempotency-Key, retrying while the API is
   * down or answers 5xx: however often it is retried, it is one run.
   */
  async startRun(workflowType: string, initialData: Record<string, unknown>, deadlineMs = 120_000): Promise<{ id: string; tries: number }> {
    const key = `chaos-${uid()}`;
    const deadline = Date.now() + deadlineMs;
    let last: HttpResult | undefined;
    for (let tries = 1; Date.now() < deadline; tries++) {
      last = await this.request('/api/workflows/start', {
        body: { workflow_type: workflowType, initial_data: initialData },
        headers: { 'idempotency-key': key },
      });
      if (last.status === 201) return { id: last.body.workflow_id, tries };
      if (last.status !== 0 && last.status < 500) break;
      await sleep(250);
    }
    throw new Error(`start ${workflowType} answered ${last?.status} ${last?.error ?? JSON.stringify(last?.body)}`);
  }

  /** Reads a run and its history, retrying while the API is down. */
  async readRun(id: string): Promise<{ run: any; history: any[] }> {
    for (let i = 0; ; i++) {
      const [run, history] = await Promise.all([this.request(`/api/workflows/${id}`), this.request(`/api/workflows/${id}/history`)]);
      if (run.status === 200 && history.status === 200) return { run: run.body, history: history.body.transitions };
      if (i >= 40 || (run.status >= 400 && run.status < 500)) {
        throw new Error(`reading ${id}: ${run.status} ${run.error ?? ''} / ${history.status} ${history.error ?? ''}`);
      }
      await sleep(500);
    }
  }

  /**
   * Waits until every run is terminal in the projection (the list endpoint, one
   * request per round, tolerating an API that is down). Returns the ids that did
   * not end by the deadline, which the caller counts as losses.
   */
  async waitAllTerminal(ids: string[], deadlineMs: number): Promise<string[]> {
    const pending = new Set(ids);
    const deadline = Date.now() + deadlineMs;
    while (pending.size && Date.now() < deadline && !this.closed) {
      if (this.crashed().length) break; // no run of a crashed process will end: report it now
      const running = new Set<string>();
      let cursor: string | null = null;
      let complete = true;
      do {
        const res: HttpResult = await this.request(`/api/workflows?status=RUNNING&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        if (res.status !== 200) {
          complete = false;
          break;
        }
        for (const r of res.body.runs) running.add(r.workflow_id);
        cursor = res.body.next_cursor;
      } while (cursor);
      if (complete) for (const id of [...pending]) if (!running.has(id)) pending.delete(id);
      if (pending.size) await sleep(500);
    }
    // Confirm one by one: a run missing from the RUNNING list must really be terminal.
    const notEnded: string[] = [...pending];
    for (const id of ids) {
      if (pending.has(id)) continue;
      const { run } = await this.readRun(id);
      if (!run.is_terminal) notEnded.push(id);
    }
    return notEnded;
  }

  /**
   * The attempt number of the activity attempt Temporal recorded as completed in a
   * run's history (the DELETE runs have one activity), read with the CLI: event
   * attributes are not encrypted, only payloads are. undefined if none completed.
   */
  async completedActivityAttempt(workflowId: string): Promise<number | undefined> {
    const out = JSON.parse(await this.temporal.cli(['workflow', 'show', '-w', workflowId, '-o', 'json']));
    const events: any[] = out.events ?? [];
    const completed = events.find((e) => e.activityTaskCompletedEventAttributes);
    if (!completed) return undefined;
    const startedId = String(completed.activityTaskCompletedEventAttributes.startedEventId);
    const started = events.find((e) => String(e.eventId) === startedId);
    return started ? Number(started.activityTaskStartedEventAttributes?.attempt) : undefined;
  }

  /** The disruptions whose window overlaps [from, to]. */
  disruptedBetween(from: number, to: number, kinds: Disruption['kind'][]): Disruption[] {
    return this.disruptions.filter((d) => kinds.includes(d.kind) && d.from <= to && d.to >= from);
  }

  /** Runs a test body; when it fails, prints the end of the service log (and keeps the work dir). */
  async guard(body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (err) {
      this.keep = true;
      process.stdout.write(`\nchaos: service log ${this.logFile} (kept), last lines:\n${this.logTail()}\n`);
      throw err;
    }
  }

  logTail(lines = 20): string {
    try {
      // Without the access log: warnings, errors and what the processes printed.
      const all = fs.readFileSync(this.logFile, 'utf8').trim().split('\n');
      return all.filter((l) => !l.includes('"request completed"')).slice(-lines).map((l) => l.slice(0, 600)).join('\n');
    } catch {
      return '';
    }
  }
}
