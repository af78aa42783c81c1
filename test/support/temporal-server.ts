import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { projectRoot } from '../../db/client';
import { SEARCH_ATTRIBUTES } from '../../workflows/constants';
import { freePort, waitFor } from './ports';

export const temporalBinary = () => path.join(projectRoot(), '.venv', 'bin', 'temporal');

/** `--dynamic-config-value` flags for every dev server: scripts/temporal-dev.dynamic-config, the one `make up` reads too. */
export function devServerDynamicConfigArgs(): string[] {
  const file = path.join(projectRoot(), 'scripts', 'temporal-dev.dynamic-config');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .flatMap((line) => ['--dynamic-config-value', line]);
}

export interface TemporalDevServer {
  address: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The Web UI, served on uiPort, its payloads decoded by the remote codec at codecEndpoint. */
export interface TemporalUiOptions {
  uiPort: number;
  codecEndpoint: string;
}

/** How often a start whose ports were taken is tried again, on fresh ports. */
const PORT_ATTEMPTS = 3;

/** A real Temporal dev server on free ports, in memory, with the engine's search attributes registered; headless unless ui is given. */
export async function startTemporalDevServer(logFile: string, ui?: TemporalUiOptions): Promise<TemporalDevServer> {
  const binary = temporalBinary();
  if (!fs.existsSync(binary)) throw new Error(`${binary} missing: run scripts/bootstrap.sh`);
  // A port free when picked may be some outgoing connection's local port by the time the server
  // binds it (they come from the same ephemeral range): the server exits, and is started again.
  for (let attempt = 1; ; attempt++) {
    const logStart = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    const server = await startOnce(binary, logFile, ui);
    if (server) return server;
    const logged = fs.readFileSync(logFile, 'utf8').slice(logStart);
    if (attempt === PORT_ATTEMPTS || !logged.includes('address already in use')) throw new Error(`temporal exited at start; see ${logFile}`);
  }
}

/** Undefined when the server exited before it answered. */
async function startOnce(binary: string, logFile: string, ui?: TemporalUiOptions): Promise<TemporalDevServer | undefined> {
  const port = await freePort();
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', ...devServerDynamicConfigArgs()];
  if (ui) args.push('--ui-port', String(ui.uiPort), '--ui-codec-endpoint', ui.codecEndpoint, '--ui-disable-news-fetch');
  else args.push('--headless');
  args.push('--http-port', String(await freePort()), '--metrics-port', String(await freePort()));
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);
  const log = fs.openSync(logFile, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', log, log] });
  const address = `127.0.0.1:${port}`;
  const up = await waitFor('Temporal dev server', async () => {
    if (child.exitCode !== null) return false;
    const connection = await Connection.connect({ address, connectTimeout: 1_000 });
    try {
      await connection.healthService.check({});
      return true;
    } finally {
      await connection.close();
    }
  });
  fs.closeSync(log);
  if (!up) return undefined;
  return {
    address,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
