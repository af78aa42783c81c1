import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { SEARCH_ATTRIBUTES } from '../../../workflows/constants';
import { freePort, waitFor } from '../../support/ports';
import { devServerDynamicConfigArgs, temporalBinary } from '../../support/temporal-server';

/**
 * A Temporal dev server whose state lives in a SQLite file (`--db-filename`),
 * so it can be stopped (gracefully or with SIGKILL) and started again on the
 * same ports with every execution, timer and task queue intact.
 */
export class PersistentTemporal {
  private child?: ChildProcess;
  private args: string[] = [];
  port = 0;
  restarts = 0;

  constructor(
    private readonly dbFile: string,
    private readonly logFile: string,
  ) {}

  get address() {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.args.length) {
      const binary = temporalBinary();
      if (!fs.existsSync(binary)) throw new Error(`${binary} missing: run scripts/bootstrap.sh`);
      this.port = await freePort();
      this.args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(this.port), '--headless', '--log-level', 'warn', ...devServerDynamicConfigArgs()];
      this.args.push('--http-port', String(await freePort()), '--metrics-port', String(await freePort()));
      this.args.push('--db-filename', this.dbFile);
      for (const key of SEARCH_ATTRIBUTES) this.args.push('--search-attribute', `${key.name}=Keyword`);
    }
    const log = fs.openSync(this.logFile, 'a');
    const child = spawn(temporalBinary(), this.args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.child = child;
    await waitFor(
      'Temporal dev server',
      async () => {
        if (child.exitCode !== null) throw new Error(`temporal exited with ${child.exitCode}; see ${this.logFile}`);
        // Through the CLI: a gRPC client in this process keeps jest alive for seconds after the suite.
        return (await this.cli(['operator', 'cluster', 'health'], 3_000)).includes('SERVING') || undefined;
      },
      60_000,
      200,
    );
  }

  /** Runs the temporal CLI against this server; resolves its stdout (rejects on a non-zero exit). */
  cli(args: string[], timeoutMs = 15_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(temporalBinary(), [...args, '--address', this.address], { timeout: timeoutMs }, (err, stdout, stderr) =>
        err ? reject(new Error(`temporal ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
    });
  }

  /** Stops the server: SIGTERM (graceful) or SIGKILL (a crash). */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && !child.signalCode) {
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** Stops it, leaves it down for `downMs`, starts it again on the same port from the same file. */
  async restart(signal: 'SIGTERM' | 'SIGKILL', downMs: number): Promise<void> {
    await this.stop(signal);
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
    this.restarts += 1;
  }
}
