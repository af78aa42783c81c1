import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDbhostDouble } from '../doubles/dbhost-double';
import { ESIGN_PLATFORM_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { outboundAllowFor, TEST_PROVIDER_HOST } from './outbound';
import { Stack, startControlServer } from './stack';
import { startTemporalDevServer } from './temporal-server';
import { createTestDatabase } from './test-database';

/**
 * Starts what the integration suites need, once: a Temporal dev server on
 * free ports, a fresh database (Postgres when DATABASE_URL is set, else
 * PGlite), the API and worker processes, the provider doubles, and two
 * organizations created through the real CLI. Tests find it all in TEST_* env.
 */
export default async function globalSetup(): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-it-'));
  const logFile = path.join(workDir, 'service.log');
  const temporal = await startTemporalDevServer(path.join(workDir, 'temporal.log'));
  const database = process.env.DATABASE_URL ? await createTestDatabase(process.env.DATABASE_URL) : undefined;
  const esign = await startEsignDouble();
  // The platform's own e-signature account: the only origin the worker's ESIGN_API_TOKEN may go to.
  const esignPlatform = await startEsignDouble({ validToken: ESIGN_PLATFORM_TOKEN });
  const dbhost = await startDbhostDouble();
  const stack = new Stack({
    temporalAddress: temporal.address,
    databaseUrl: database?.url,
    dataDir: path.join(workDir, 'data'),
    logFile,
    extraEnv: { ESIGN_API_TOKEN: ESIGN_PLATFORM_TOKEN, ESIGN_API_BASE_URL: esignPlatform.url },
    outboundAllow: `${outboundAllowFor(esign.url, dbhost.url, esignPlatform.url)},${TEST_PROVIDER_HOST}`,
  });
  await stack.start();
  const control = await startControlServer(stack);
  const orgA = JSON.parse(stack.cli(['org', 'create', 'alpha', '--json']));
  const orgB = JSON.parse(stack.cli(['org', 'create', 'beta', '--json']));

  Object.assign(process.env, {
    TEST_API_URL: stack.apiUrl,
    TEST_LOGIN_URL: stack.loginUrl,
    TEST_TEMPORAL_ADDRESS: temporal.address,
    TEST_ENGINE_SECRET_KEY: stack.secretKey,
    TEST_ESIGN_URL: esign.url,
    TEST_ESIGN_PLATFORM_URL: esignPlatform.url,
    TEST_DBHOST_URL: dbhost.url,
    TEST_CONTROL_URL: control.url,
    TEST_LOG_FILE: logFile,
    TEST_WORK_DIR: workDir,
    TEST_STACK_SPLIT: stack.split ? '1' : '0',
    TEST_DATABASE_URL: database?.url ?? '',
    TEST_ORG_A: orgA.organization_uuid,
    TEST_TOKEN_A: orgA.token,
    TEST_ORG_B: orgB.organization_uuid,
    TEST_TOKEN_B: orgB.token,
  });
  (globalThis as Record<string, unknown>).__ENGINE_TEST__ = { temporal, database, esign, esignPlatform, dbhost, stack, control, workDir };
}
