import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A database of its own for one test run, created next to DATABASE_URL's. */
export async function createTestDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `engine_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
