import fs from 'node:fs';
import http from 'node:http';
import type { Database } from '../../db/client';
import type { Identity } from '../identity/identity';
import type { Logger } from '../logger';
import { type AdminCommand, runAdminCommand } from './org-admin';

/**
 * PGlite is one process's database: while the API holds it, the CLI cannot
 * open it. The API then serves the CLI's commands on a unix socket that only
 * the owner of the data directory can open (mode 0600).
 */
export async function startAdminSocket(socketPath: string, db: Database, log: Logger, identity: Identity): Promise<() => Promise<void>> {
  fs.rmSync(socketPath, { force: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        const cmd = JSON.parse(Buffer.concat(chunks).toString()) as AdminCommand;
        const result = await runAdminCommand(db, cmd, identity);
        log.info({ command: cmd.command }, 'admin command over socket');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  fs.chmodSync(socketPath, 0o600);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      fs.rmSync(socketPath, { force: true });
    });
}

/** Sends a command to a running API's admin socket; undefined when no API is listening there. */
export function sendAdminCommand(socketPath: string, cmd: AdminCommand): Promise<Record<string, unknown> | undefined> {
  if (!fs.existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: '/' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(body.error ?? `admin socket answered ${res.statusCode}`));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A socket file left by a crashed API: nobody is listening, so open the database directly.
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(undefined);
      else reject(err);
    });
    req.end(JSON.stringify(cmd));
  });
}
