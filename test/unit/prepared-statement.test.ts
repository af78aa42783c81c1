import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { preparedStatement } from '../../db/prepared-statement';
import { openMigratedPglite } from '../support/pglite';
import { createTestDatabase } from '../support/test-database';

describe('preparedStatement on PGlite (prepared once, then one bind-execute-sync exchange per call)', () => {
  let database: DatabaseHandle;
  let client: PGlite;
  beforeAll(async () => {
    database = await openMigratedPglite();
    client = (database.db as unknown as { $client: PGlite }).$client;
    await client.exec(`create table prepared_probe (
      id text primary key, n int, at timestamptz, doc jsonb, flag boolean, tags text[], counts int[], note text)`);
  });
  afterAll(() => database.close());

  const INSERT = `insert into prepared_probe (id, n, at, doc, flag, tags, counts, note)
    values ($1, $2, $3::timestamptz, $4::jsonb, $5, $6::text[], $7::int[], $8)`;
  const row = async (id: string) => (await client.query<Record<string, unknown>>('select * from prepared_probe where id = $1', [id])).rows[0];

  it('sends every parameter type the projection uses as PGlite would, nulls included', async () => {
    const insert = preparedStatement(database.db, 'probe_insert', INSERT);
    const at = '2026-11-24T10:00:00.123Z';
    await insert(['a', 7, at, JSON.stringify({ quote: 'it\'s "x"', n: [1, 2] }), true, ['plain', 'with,comma', 'with "quote"', null], [1, 2, 3], null]);
    await insert(['b', null, null, null, false, [], null, 'ünïcode ✓']);
    expect(await row('a')).toEqual({
      id: 'a',
      n: 7,
      at: new Date(at),
      doc: { quote: 'it\'s "x"', n: [1, 2] },
      flag: true,
      tags: ['plain', 'with,comma', 'with "quote"', null],
      counts: [1, 2, 3],
      note: null,
    });
    expect(await row('b')).toMatchObject({ n: null, at: null, doc: null, flag: false, tags: [], counts: null, note: 'ünïcode ✓' });
  });

  const CLOSE = 0x43; // 'C': the first message of a preparation (close, parse, describe, sync)

  /** The database seen through a client of its own (another handle on the same PGlite session), counting preparations. */
  const anotherHandle = () => {
    let preparations = 0;
    const handleClient = new Proxy(client, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === 'execProtocol') {
          return (message: Uint8Array, ...rest: unknown[]) => {
            if (message[0] === CLOSE) preparations++;
            return (value as (...args: unknown[]) => Promise<unknown>).call(target, message, ...rest);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const db = new Proxy(database.db, {
      get: (target, key, receiver) => (key === '$client' ? handleClient : Reflect.get(target, key, receiver)),
    });
    return { db, preparations: () => preparations };
  };

  it('answers the rows the statement returned, each column as text (null as null)', async () => {
    const returning = preparedStatement(database.db, 'probe_returning', `${INSERT} returning id, n::text, note`);
    expect(await returning(['r1', 5, null, null, null, null, null, null])).toEqual([['r1', '5', null]]);
    expect(await preparedStatement(database.db, 'probe_no_rows', INSERT)(['r2', 6, null, null, null, null, null, null])).toEqual([]);
  });

  it('prepares a statement once per handle: later writes, and other statements of that name, only bind', async () => {
    const handle = anotherHandle();
    const first = preparedStatement(handle.db, 'probe_once', INSERT);
    const second = preparedStatement(handle.db, 'probe_once', INSERT);
    await Promise.all([first(['o1', 1, null, null, null, null, null, null]), second(['o2', 2, null, null, null, null, null, null])]);
    await first(['o3', 3, null, null, null, null, null, null]);
    expect(handle.preparations()).toBe(1);
    expect(((await row('o3')) as { n: number }).n).toBe(3);
  });

  it('prepares a name the session already holds (from another handle) again, instead of failing', async () => {
    await preparedStatement(database.db, 'probe_shared', INSERT)(['s1', 1, null, null, null, null, null, null]);
    const handle = anotherHandle();
    await preparedStatement(handle.db, 'probe_shared', INSERT)(['s2', 2, null, null, null, null, null, null]);
    expect(handle.preparations()).toBe(1);
    expect(((await row('s1')) as { n: number }).n).toBe(1);
    expect(((await row('s2')) as { n: number }).n).toBe(2);
  });

  it("waits for another caller's transaction instead of writing inside it", async () => {
    const insert = preparedStatement(database.db, 'probe_outside', INSERT);
    await insert(['warm', null, null, null, null, null, null, null]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = database.db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into prepared_probe (id) values ('in-tx')`);
        await held;
        tx.rollback();
      })
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const write = insert(['outside', 1, null, null, null, null, null, null]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await Promise.race([write.then(() => 'written'), Promise.resolve('waiting')])).toBe('waiting');
    release();
    await transaction;
    await write;
    expect(await row('in-tx')).toBeUndefined();
    expect(await row('outside')).toMatchObject({ id: 'outside', n: 1 });
  });

  it('prepares the statement again when the session lost it (DEALLOCATE ALL, DISCARD ALL), and the write goes through', async () => {
    const handle = anotherHandle();
    const insert = preparedStatement(handle.db, 'probe_lost', INSERT);
    await insert(['lost-1', 1, null, null, null, null, null, null]);
    await client.exec('deallocate all');
    await insert(['lost-2', 2, null, null, null, null, null, null]);
    await client.exec('discard all');
    await insert(['lost-3', 3, null, null, null, null, null, null]);
    await insert(['lost-4', 4, null, null, null, null, null, null]);
    expect(handle.preparations()).toBe(3);
    for (const [id, n] of [['lost-2', 2], ['lost-3', 3], ['lost-4', 4]] as const) expect(await row(id)).toMatchObject({ id, n });
  });

  it("rejects with the database's error (its SQLSTATE, none of the values) and keeps working", async () => {
    const insert = preparedStatement(database.db, 'probe_errors', INSERT);
    await insert(['dup', null, null, null, null, null, null, 'secret-value']);
    const err = await insert(['dup', null, null, null, null, null, null, 'secret-value']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505' });
    expect(String((err as Error).message)).not.toContain('secret-value');
    await insert(['after-error', 3, null, null, null, null, null, null]);
    expect(await row('after-error')).toMatchObject({ n: 3 });
  });
});

// On Postgres when DATABASE_URL is set (CI): pg prepares per connection and must be told when the
// server forgot. One pooled connection, so every statement here runs on the same session.
(process.env.DATABASE_URL ? describe : describe.skip)('preparedStatement on Postgres (pg, one named statement per connection)', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createTestDatabase(process.env.DATABASE_URL!);
    drop = created.drop;
    database = await openDatabase({ databaseUrl: created.url, poolSize: 1 });
    await database.db.execute(sql.raw('create table prepared_probe (id text primary key, n int)'));
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  const INSERT = 'insert into prepared_probe (id, n) values ($1, $2)';
  // node-postgres answers raw statements with { rows }.
  const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
  const backend = async () => rowsOf<{ pid: number }>(await database.db.execute(sql`select pg_backend_pid() as pid`))[0].pid;
  const ids = async (prefix: string) =>
    rowsOf<{ id: string }>(await database.db.execute(sql`select id from prepared_probe where id like ${`${prefix}%`} order by id`)).map((r) => r.id);

  it('prepares the statement again on the same connection when the session lost it (DEALLOCATE ALL, DISCARD ALL)', async () => {
    const insert = preparedStatement(database.db, 'probe_lost_pg', INSERT);
    await insert(['lost-1', 1]);
    const pid = await backend();
    await database.db.execute(sql`deallocate all`);
    await insert(['lost-2', 2]);
    await database.db.execute(sql`discard all`);
    await insert(['lost-3', 3]);
    await insert(['lost-4', 4]);
    expect(await ids('lost-')).toEqual(['lost-1', 'lost-2', 'lost-3', 'lost-4']);
    expect(await backend()).toBe(pid);
  });

  it('answers the rows the statement returned, each column as text (null as null)', async () => {
    const returning = preparedStatement(database.db, 'probe_returning_pg', `${INSERT} returning id, n::text, null::text`);
    expect(await returning(['returned', 5])).toEqual([['returned', '5', null]]);
    expect(await preparedStatement(database.db, 'probe_no_rows_pg', INSERT)(['not-returned', 6])).toEqual([]);
  });

  it("rejects with the database's error, and the next write goes through", async () => {
    const insert = preparedStatement(database.db, 'probe_errors_pg', INSERT);
    await insert(['error-dup', 1]);
    await expect(insert(['error-dup', 2])).rejects.toMatchObject({ code: '23505' });
    await insert(['error-after', 3]);
    expect(await ids('error-')).toEqual(['error-after', 'error-dup']);
  });
});
