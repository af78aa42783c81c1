import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { serialize } from 'pg-protocol';
import type { DataRowMessage } from 'pg-protocol/dist/messages';
import type { Database } from './client';

/** The rows a statement returned, each as its columns' text (null for SQL NULL). */
export type Rows = (string | null)[][];

export type Statement = (values: readonly unknown[]) => Promise<Rows>;

/**
 * A statement run so often that what Drizzle and the database do around it each time shows (the
 * projection's write of every transition, `BENCH=steps make bench`). It is a named prepared
 * statement, parsed and planned once per session: on Postgres each pooled connection prepares it
 * (pg does, by name; 0.45 → 0.18 ms per write here). PGlite's `query()` parses and plans every
 * statement again in six protocol exchanges (parse, describe, bind, describe, execute, sync), so on
 * PGlite the statement is prepared once and each write is one exchange: bind, execute, sync.
 * On either, a write that finds the statement gone from its session (SQLSTATE 26000, after a
 * DEALLOCATE or DISCARD ALL, which a pooler may send when it hands the connection over) prepares
 * it again and is sent once more. `text` is fixed SQL with $1…$n placeholders; it answers with
 * the rows the statement returned, as text: select only text columns (or cast them) where a
 * caller reads them.
 */
export function preparedStatement(db: Database, name: string, text: string): Statement {
  const client = (db as unknown as { $client: PGlite | pg.Pool }).$client;
  if (client instanceof PGlite) return pgliteStatement(client, name, text);
  return postgresStatement(client, name, text);
}

/**
 * pg prepares a name once per connection and remembers it in the connection's
 * `parsedStatements`, with no way to tell it that the server forgot; so a lost statement is
 * forgotten there too, on the connection that found it lost, and the write sent again on it
 * (test/unit/prepared-statement.test.ts fails if pg stops keeping that record).
 */
function postgresStatement(pool: pg.Pool, name: string, text: string): Statement {
  return async (values) => {
    const client = await pool.connect();
    // As pool.query() does: a connection that breaks while checked out emits 'error', which needs
    // a listener, and a connection that failed in any way leaves the pool.
    let failure: Error | undefined;
    const onError = (err: Error) => (failure ??= err);
    client.on('error', onError);
    const query = { name, text, values: [...values], rowMode: 'array' as const };
    try {
      try {
        return (await client.query(query)).rows;
      } catch (err) {
        if (!isLost(err)) throw err;
        delete (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name];
        return (await client.query(query)).rows;
      }
    } catch (err) {
      failure ??= err as Error;
      throw err;
    } finally {
      client.removeListener('error', onError);
      client.release(failure);
    }
  };
}

/** Per PGlite instance (one session), each statement's parameter types once it is prepared. */
const prepared = new WeakMap<PGlite, Map<string, Promise<number[]>>>();

/**
 * The transaction lock and then the query lock, as PGlite's own `query()` takes them: the
 * protocol messages sent here must neither land inside another caller's transaction nor between
 * the messages of another query. `_runExclusiveTransaction` is PGlite's (declared on its base
 * class), not a public method; test/unit/prepared-statement.test.ts fails if that changes.
 */
function exclusive<T>(client: PGlite, fn: () => Promise<T>): Promise<T> {
  const locks = client as unknown as { _runExclusiveTransaction<R>(f: () => Promise<R>): Promise<R> };
  return locks._runExclusiveTransaction(() => client.runExclusive(fn));
}

function pgliteStatement(client: PGlite, name: string, text: string): Statement {
  let statements = prepared.get(client);
  if (!statements) prepared.set(client, (statements = new Map()));
  const byName = statements;
  const parameterTypes = (): Promise<number[]> => {
    let types = byName.get(name);
    if (!types) {
      types = exclusive(client, async () => {
        // Closing first (not an error when there is nothing to close) lets another handle on
        // the same session prepare the same name.
        const prepare = [serialize.close({ type: 'S', name }), serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()];
        const { messages } = await client.execProtocol(Buffer.concat(prepare));
        const description = messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs: number[] } | undefined;
        return description?.dataTypeIDs ?? [];
      });
      // A statement that failed to prepare is prepared again by the next write.
      types.catch(() => byName.get(name) === types && byName.delete(name));
      byName.set(name, types);
    }
    return types;
  };
  return async (values) => {
    for (let attempt = 1; ; attempt++) {
      const preparation = parameterTypes();
      const types = await preparation;
      const serializers = client.serializers;
      const params = values.map((value, i) => (value == null ? null : (serializers[types[i]]?.(value) ?? String(value))));
      try {
        const { messages } = await exclusive(client, () =>
          client.execProtocol(Buffer.concat([serialize.bind({ statement: name, values: params }), serialize.execute({}), serialize.sync()])),
        );
        return messages.filter((m): m is DataRowMessage => m.name === 'dataRow').map((m) => m.fields);
      } catch (err) {
        if (!isLost(err)) throw err;
        // The session lost the statement (DEALLOCATE or DISCARD ALL ran on it): prepare it again, once.
        if (byName.get(name) === preparation) byName.delete(name);
        if (attempt > 1) throw err;
      }
    }
  };
}

/** SQLSTATE 26000: no prepared statement of that name in the session. */
const isLost = (err: unknown) => (err as { code?: unknown } | undefined)?.code === '26000';
