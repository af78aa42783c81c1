import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { INWARD_CERT_PATH } from '../doubles/inward-service';
import { TEST_PROVIDER_HOST } from './outbound';
import { freePort, waitFor } from './ports';

/**
 * The service as production runs it: compiled code in child processes. With
 * DATABASE_URL (CI) the API and the worker are separate processes on Postgres;
 * without it, one `all` process on PGlite (PGlite is one process's database).
 */
export interface StackOptions {
  temporalAddress: string;
  databaseUrl?: string;
  dataDir: string;
  logFile: string;
  /** OUTBOUND_ALLOW: exactly the doubles this stack's worker must reach (see test/support/outbound.ts). */
  outboundAllow: string;
  extraEnv?: Record<string, string>;
}

type Role = 'api' | 'worker' | 'all';

/** How long the stack's API trusts a resolved token: a revoked one must fail within this. */
export const STACK_TOKEN_CACHE_TTL_MS = 2_000;
/** The nice value the stack gives the threads that execute runs where API and worker share a process. */
export const STACK_RUN_THREADS_NICE = 10;

/**
 * The suites register tens of accounts from loopback, and on Postgres the extra APIs count in the
 * stack's rows: the registration limit is far above that everywhere but where a test sets its own.
 */
export const SUITE_REGISTRATIONS_PER_CLIENT = '10000';

export class Stack {
  readonly root = projectRoot();
  private readonly children = new Map<Role, ChildProcess>();
  /** This run's master key: what an operator sets as ENGINE_SECRET_KEY. */
  readonly secretKey = randomBytes(32).toString('hex');
  port = 0;
  loginPort = 0;

  constructor(private readonly options: StackOptions) {}

  get apiUrl() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The login host (LOGIN_URL): the API process's second listener. */
  get loginUrl() {
    return `http://127.0.0.1:${this.loginPort}`;
  }

  get split() {
    return Boolean(this.options.databaseUrl);
  }

  env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: this.options.temporalAddress,
      DATA_DIR: this.options.dataDir,
      PORT: String(this.port),
      LOGIN_PORT: String(this.loginPort),
      ALLOW_HTTP_HOSTS: `127.0.0.1,${TEST_PROVIDER_HOST}`,
      OUTBOUND_ALLOW: this.options.outboundAllow,
      NODE_EXTRA_CA_CERTS: INWARD_CERT_PATH,
      PROVIDER_TIMEOUT_MS: '1500',
      SSE_KEEPALIVE_MS: '1000',
      CLOSED_RUN_SWEEP_SECONDS: '1',
      LOG_LEVEL: 'info',
      WORKFLOW_BUNDLE_PATH: path.join(this.root, 'dist', 'workflow-bundle.js'),
      ENGINE_SECRET_KEY: this.secretKey,
      SSE_MAX_STREAMS_PER_TOKEN: '5',
      TOKEN_CACHE_TTL_MS: String(STACK_TOKEN_CACHE_TTL_MS),
      // Opt-in in production; on here so that a renamed SDK or core thread fails a test (run-thread-priority.test.ts).
      RUN_THREADS_NICE: String(STACK_RUN_THREADS_NICE),
      REGISTRATIONS_PER_CLIENT: SUITE_REGISTRATIONS_PER_CLIENT,
      ...this.options.extraEnv,
    };
    if (this.options.databaseUrl) env.DATABASE_URL = this.options.databaseUrl;
    return env;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.loginPort = await freePort();
    if (this.split) {
      await Promise.all([this.startRole('api'), this.startRole('worker')]);
    } else {
      await this.startRole('all');
    }
  }

  /** The role that runs the worker: killing it kills the API too when they share a process. */
  get workerRole(): Role {
    return this.split ? 'worker' : 'all';
  }

  async startRole(role: Role): Promise<void> {
    const log = fs.openSync(this.options.logFile, 'a');
    const child = spawn(process.execPath, [path.join(this.root, 'dist', 'src', 'main.js'), role], {
      cwd: this.root,
      env: this.env(),
      stdio: ['ignore', 'pipe', log],
    });
    this.children.set(role, child);
    let ready = false;
    const marker = role === 'api' ? '"API listening"' : '"worker running"';
    child.stdout!.on('data', (chunk: Buffer) => {
      fs.appendFileSync(this.options.logFile, chunk);
      if (chunk.toString().includes(marker)) ready = true;
    });
    await waitFor(`${role} process`, async () => {
      if (child.exitCode !== null) throw new Error(`${role} exited with ${child.exitCode}; see ${this.options.logFile}`);
      return ready || undefined;
    });
    if (role === 'all') {
      await waitFor('API', async () => ((await fetch(`${this.apiUrl}/api/health`)).ok ? true : undefined));
    }
  }

  async kill(role: Role, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.children.get(role);
    if (!child || child.exitCode !== null || child.signalCode) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.children.keys()].map((role) => this.kill(role, 'SIGTERM')));
  }

  /** Runs the real CLI against the stack's database, as an operator would. */
  cli(args: string[]): string {
    return execFileSync(process.execPath, [path.join(this.root, 'dist', 'src', 'cli.js'), ...args], {
      cwd: this.root,
      env: this.env(),
      encoding: 'utf8',
    });
  }
}

/** An HTTP endpoint in the setup process that lets test files kill and restart stack processes. */
export async function startControlServer(stack: Stack): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://control');
      const role = (url.searchParams.get('role') ?? stack.workerRole) as Role;
      if (url.pathname === '/kill') await stack.kill(role, (url.searchParams.get('signal') as NodeJS.Signals) ?? 'SIGKILL');
      else if (url.pathname === '/start') await stack.startRole(role);
      else return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, role }));
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
