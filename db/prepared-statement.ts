import { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import type { Database } from './client';

export type Statement = (values: readonly unknown[]) => Promise<void>;

/**
 * A statement run so often that what Drizzle and the database do around it each time shows (the
 * projection's write of every transition, `BENCH=steps make bench`). On Postgres it is a named
 * prepared statement, which each pooled connection parses and plans once (0.45 → 0.18 ms per
 * write here); on PGlite it goes to the client without the parser options Drizzle adds to every
 * query, for which PGlite copies its whole parser table (0.91 → 0.64 ms). `text` is fixed SQL with
 * $1…$n placeholders; its result is not read.
 */
export function preparedStatement(db: Database, name: string, text: string): Statement {
  const client = (db as unknown as { $client: PGlite | pg.Pool }).$client;
  if (client instanceof PGlite) {
    return async (values) => {
      await client.query(text, [...values]);
    };
  }
  return async (values) => {
    await client.query({ name, text, values: [...values] });
  };
}
