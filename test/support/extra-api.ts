import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { freePort, waitFor } from './ports';
import { SUITE_REGISTRATIONS_PER_CLIENT } from './stack';

/**
 * A second API process (or API + worker) with its own settings, for suites that need a
 * configuration the shared stack must not have (a dead Temporal, tiny limits, traces).
 * On Postgres it shares the stack's database and master key; on PGlite it gets its own.
 */
export class ExtraApi {
  private child?: ChildProcess;
  private dataDir?: string;
  output = '';
  url = '';
  readonly env: NodeJS.ProcessEnv;
  /** A PORT given up front is kept: a Temporal UI may already point its codec endpoint there. */
  private readonly portGiven: boolean;

  /** mode `all` runs a worker too: only against a Temporal server of its own, or it takes the stack's tasks. */
  constructor(
    overrides: Record<string, string>,
    private readonly mode: 'api' | 'all' = 'api',
  ) {
    this.portGiven = overrides.PORT !== undefined;
    this.env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'info',
      // One database, one master key: what the stack sealed there (signing keys, connection
      // secrets) the extra API must open, and the other way round.
      ENGINE_SECRET_KEY: process.env.TEST_DATABASE_URL ? process.env.TEST_ENGINE_SECRET_KEY! : randomBytes(32).toString('hex'),
      REGISTRATIONS_PER_CLIENT: SUITE_REGISTRATIONS_PER_CLIENT,
      ...overrides,
    };
    if (process.env.TEST_DATABASE_URL) {
      this.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
    } else {
      this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-extra-api-'));
      this.env.DATA_DIR = this.dataDir;
    }
  }

  /** A free port can be taken by another process before the child binds it: then it starts again on another. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.launch(this.portGiven ? Number(this.env.PORT) : await freePort());
      } catch (err) {
        if (this.portGiven || attempt === 3 || !this.output.includes('EADDRINUSE')) throw err;
        this.output = '';
      }
    }
  }

  private async launch(port: number): Promise<void> {
    this.env.PORT = String(port);
    this.url = `http://127.0.0.1:${port}`;
    const root = projectRoot();
    const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js'), this.mode], {
      cwd: root,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.output += c.toString()));
    await waitFor(
      'the extra API to listen',
      async () => {
        if (child.exitCode !== null) throw new Error(`api exited with ${child.exitCode}: ${this.output.slice(-2000)}`);
        return this.output.includes('"API listening"') || undefined;
      },
      30_000,
      100,
    );
  }

  /** The real CLI against this API's database (through its admin socket on PGlite). */
  cli(args: string[]): string {
    return execFileSync(process.execPath, [path.join(projectRoot(), 'dist', 'src', 'cli.js'), ...args], {
      cwd: projectRoot(),
      env: this.env,
      encoding: 'utf8',
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    if (this.dataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
