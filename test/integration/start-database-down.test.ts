import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { TcpProxy } from '../chaos/support/tcp-proxy';
import { stackEnv, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres, throughProxy } from '../support/private-postgres';

jest.setTimeout(120_000);

const TYPE = 'esign.resources.get-resource-information';

// The database ping of POST /start runs while the request is checked and is shared by concurrent
// starts: neither may let a start through to Temporal once the database stops answering.
if (!privatePostgresAvailable()) console.warn('start-database-down: no DATABASE_URL and no PostgreSQL binaries: skipped');
(privatePostgresAvailable() ? describe : describe.skip)('POST /start with the database gone', () => {
  let postgres: PrivatePostgres;
  let proxy: TcpProxy;
  let extra: ExtraApi;
  let connection: Connection;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    proxy = new TcpProxy(postgres.host, postgres.port);
    await proxy.start();
    extra = new ExtraApi({ TEMPORAL_ADDRESS: stackEnv.temporalAddress, TOKEN_CACHE_TTL_MS: '600000', DATABASE_QUERY_TIMEOUT_MS: '2000' });
    extra.env.DATABASE_URL = throughProxy(postgres.url, proxy.port);
    await extra.start();
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
  });
  afterAll(async () => {
    await extra?.stop();
    await connection?.close();
    await proxy?.close();
    await postgres?.stop();
  });

  it('refuses every start, concurrent ones included, with 503 database_unavailable, and starts nothing', async () => {
    // Straight to the database: the proxy lives in this process, which a synchronous child would block.
    const created = execFileSync(process.execPath, ['dist/src/cli.js', 'org', 'create', uniqueId('db-down'), '--json'], {
      env: { ...extra.env, DATABASE_URL: postgres.url },
      encoding: 'utf8',
    });
    const { token, organization_uuid: org } = JSON.parse(created) as { token: string; organization_uuid: string };
    const call = (path: string, body?: unknown) =>
      fetch(`${extra.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
    // Resolved now, so the token is answered from the cache once the database is gone.
    expect((await call('/api/auth/me')).status).toBe(200);
    await proxy.cut();

    const responses = await Promise.all(
      Array.from({ length: 6 }, () => call('/api/workflows/start', { workflow_type: TYPE, initial_data: { base_url: 'https://esign.invalid/api' } })),
    );
    for (const res of responses) {
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
    }

    // Temporal's own view: no execution of this organization, ever (visibility is given time to catch up).
    await new Promise((r) => setTimeout(r, 2_000));
    const client = new Client({ connection });
    const { count } = await client.workflow.count(`EngineOrganizationUuid = '${org}'`);
    expect(count).toBe(0);
  });
});
