import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, waitFor } from './ports';
import { createTestDatabase } from './test-database';

export interface PrivatePostgres {
  url: string;
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Where a PostgreSQL server's binaries are: Debian's packages, else whatever PATH has. */
function postgresBin(): string | undefined {
  const debian = '/usr/lib/postgresql';
  const versions = fs.existsSync(debian) ? fs.readdirSync(debian).sort((a, b) => Number(a) - Number(b)) : [];
  const candidates = [...versions.reverse().map((v) => path.join(debian, v, 'bin')), ...(process.env.PATH ?? '').split(':')];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')));
}

/**
 * A Postgres database of the caller's own, for attacks that need a database the test can make
 * unreachable (a remote one; PGlite lives inside the process): next to DATABASE_URL when the
 * suite runs on Postgres, else a throwaway cluster from the machine's PostgreSQL binaries (as
 * `.ci/run` starts one; as the `postgres` user when the tests run as root, which initdb refuses).
 */
export function privatePostgresAvailable(): boolean {
  return Boolean(process.env.DATABASE_URL || postgresBin());
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (process.env.DATABASE_URL) {
    const database = await createTestDatabase(process.env.DATABASE_URL);
    const url = new URL(database.url);
    return { url: database.url, host: url.hostname, port: Number(url.port || 5432), stop: database.drop };
  }
  const bin = postgresBin();
  if (!bin) throw new Error('this test needs Postgres: set DATABASE_URL, or install PostgreSQL (initdb and postgres under /usr/lib/postgresql or on PATH)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-private-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]) as [string, string[]];
  if (asRoot) execFileSync('chown', ['postgres:', dir]);
  execFileSync(...run(path.join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']), { cwd: '/', stdio: 'ignore' });
  const port = await freePort();
  const args = ['-D', dir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const child: ChildProcess = spawn(...run(path.join(bin, 'postgres'), args), { cwd: '/', stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitFor('the private Postgres', async () => {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.end();
    return true;
  }, 30_000, 100);
  return {
    url,
    host: '127.0.0.1',
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        execFileSync(...run(path.join(bin, 'pg_ctl'), ['-D', dir, '-m', 'immediate', 'stop']), { cwd: '/', stdio: 'ignore' });
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `url` with its host and port replaced: the same database reached through a proxy. */
export function throughProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
