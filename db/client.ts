import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import * as schema from './schema';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export type Unlisten = () => Promise<void>;

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  /** Where the data lives, without credentials: safe to log. */
  description: string;
  migrate(): Promise<void>;
  /**
   * Subscribes to a NOTIFY channel. `onReconnect` fires after the listening
   * connection was lost and re-established, when notifications may have been missed.
   */
  listen(channel: string, onMessage: (payload: string) => void, onReconnect?: () => void): Promise<Unlisten>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  pgliteDir?: string;
  poolSize?: number;
  /** Postgres: how long a query may go unanswered (a blackholed connection) before it fails. */
  queryTimeoutMs?: number;
}

export function projectRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + __dirname);
    dir = parent;
  }
  return dir;
}

const migrationsFolder = () => path.join(projectRoot(), 'db', 'migrations');

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.queryTimeoutMs ?? 30_000);
  return openPglite(options.pgliteDir);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'postgres (unparseable DATABASE_URL)';
  }
}

async function openPostgres(databaseUrl: string, poolSize: number, queryTimeoutMs: number): Promise<DatabaseHandle> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    query_timeout: queryTimeoutMs,
  });
  // A client losing its connection must not crash the process. Idle ones the pool replaces; a
  // checked-out one (in a transaction) has no listener of the pool's, and its queries fail anyway.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  return {
    db,
    kind: 'postgres',
    description: redactUrl(databaseUrl),
    async migrate() {
      // A client of its own, without the pool's query time-out: an index build may take minutes.
      const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
      client.on('error', () => undefined);
      await client.connect();
      try {
        // Several API or worker processes may start together: one migrates, the others wait.
        await client.query('select pg_advisory_lock(727274)');
        await migratePg(drizzlePg(client), { migrationsFolder: migrationsFolder() });
      } finally {
        await client.query('select pg_advisory_unlock(727274)').catch(() => undefined);
        await client.end();
      }
    },
    listen: (channel, onMessage, onReconnect) => listenPostgres(databaseUrl, channel, onMessage, onReconnect),
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await pool.end();
    },
  };
}

async function listenPostgres(
  databaseUrl: string,
  channel: string,
  onMessage: (payload: string) => void,
  onReconnect?: () => void,
): Promise<Unlisten> {
  let closed = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async (isReconnect: boolean): Promise<void> => {
    const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    c.on('notification', (msg) => {
      if (msg.channel === channel && msg.payload) onMessage(msg.payload);
    });
    const reconnectLater = () => {
      if (closed || client !== c) return;
      client = undefined;
      retryTimer = setTimeout(() => void connect(true).catch(() => undefined), 1_000);
    };
    c.on('error', reconnectLater);
    c.on('end', reconnectLater);
    client = c;
    try {
      await c.connect();
      await c.query(`LISTEN "${channel}"`);
      if (isReconnect) onReconnect?.();
    } catch (err) {
      reconnectLater();
      if (!isReconnect) throw err;
    }
  };
  await connect(false);
  return async () => {
    closed = true;
    if (retryTimer) clearTimeout(retryTimer);
    await client?.end().catch(() => undefined);
  };
}

async function openPglite(dataDir?: string): Promise<DatabaseHandle> {
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const client = dataDir ? new PGlite(dataDir) : new PGlite();
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    description: dataDir ? `pglite:${dataDir}` : 'pglite:memory',
    async migrate() {
      await migratePglite(drizzlePglite(client), { migrationsFolder: migrationsFolder() });
    },
    async listen(channel, onMessage) {
      const unlisten = await client.listen(channel, onMessage);
      return async () => unlisten();
    },
    async ping() {
      await db.execute(sql`select 1`);
    },
    async close() {
      await client.close();
    },
  };
}
