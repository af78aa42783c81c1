import { sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { TcpProxy } from '../chaos/support/tcp-proxy';
import { createTestDatabase } from '../support/test-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Postgres only: PGlite runs in-process and has no connection to lose.
(process.env.DATABASE_URL ? describe : describe.skip)('a Postgres connection lost under a transaction', () => {
  let proxy: TcpProxy;
  let database: DatabaseHandle;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createTestDatabase(process.env.DATABASE_URL!);
    drop = created.drop;
    const target = new URL(created.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    database = await openDatabase({ databaseUrl: target.toString(), poolSize: 2, queryTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    await database?.close().catch(() => undefined);
    await proxy?.close();
    await drop?.();
  });

  it('fails the transaction, does not crash the process, and the pool serves again once the database is back', async () => {
    await database.ping();
    const tx = database.db.transaction(async (t) => {
      await t.execute(sql`select 1`);
      await t.execute(sql`select pg_sleep(3)`);
    });
    const outcome = tx.then(
      () => 'committed',
      (err: Error) => err.message,
    );
    await sleep(300);
    // Held, then reset while the client is still checked out for the transaction: the client emits
    // 'error' with no pool listener on it, which without one of ours is an uncaught exception.
    proxy.blackhole();
    await sleep(1_500);
    await proxy.restore();
    expect(await outcome).not.toBe('committed');
    await sleep(100);
    await database.ping();
  });
});
