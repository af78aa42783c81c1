import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEsignDouble } from '../doubles/esign-double';
import { outboundAllowFor } from '../support/outbound';
import { waitFor } from '../support/ports';
import { Stack } from '../support/stack';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';
import { createTestDatabase } from '../support/test-database';

/** What the fuzzer is pointed at: the real stack plus a few objects worth reaching. */
export interface FuzzTarget {
  apiUrl: string;
  /** Two organizations: schemathesis reads one's objects as the other (object_level_authorization). */
  identities: Array<{ name: string; token: string }>;
  /** Ids of real objects of the first organization, mixed into the generated path parameters. */
  known: { runs: string[]; connections: string[] };
  stop(): Promise<void>;
}

/**
 * Starts what the fuzz suite needs, like the integration global setup does (Temporal dev
 * server on free ports, a fresh database, the compiled API and worker as child processes,
 * organizations through the real CLI), with rate limits out of the fuzzer's way, then
 * seeds a completed, a failed and a running run and a connection.
 */
export async function startFuzzTarget(logFile: string): Promise<FuzzTarget> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-fuzz-'));
  fs.writeFileSync(logFile, '');
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    if (!process.env.KEEP_TEST_DATA) fs.rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const temporal: TemporalDevServer = await startTemporalDevServer(path.join(workDir, 'temporal.log'));
    stops.push(() => temporal.stop());
    const database = process.env.DATABASE_URL ? await createTestDatabase(process.env.DATABASE_URL) : undefined;
    if (database) stops.push(() => database.drop());
    const esign = await startEsignDouble();
    stops.push(() => esign.close());
    const generous = '1000000';
    const stack = new Stack({
      temporalAddress: temporal.address,
      databaseUrl: database?.url,
      dataDir: path.join(workDir, 'data'),
      logFile,
      outboundAllow: outboundAllowFor(esign.url),
      extraEnv: {
        // The limits suite covers 429s; here they would only hide what the fuzzer sends.
        RATE_LIMIT_STARTS_PER_MINUTE_ORG: generous,
        RATE_LIMIT_STARTS_PER_MINUTE_TOKEN: generous,
        RATE_LIMIT_READS_PER_MINUTE_ORG: generous,
        RATE_LIMIT_READS_PER_MINUTE_TOKEN: generous,
        RATE_LIMIT_STARTS_PER_MINUTE_APP: generous,
        RATE_LIMIT_READS_PER_MINUTE_APP: generous,
        SSE_MAX_STREAMS_PER_TOKEN: '1000',
      },
    });
    stops.push(() => stack.stop());
    await stack.start();
    const alpha = JSON.parse(stack.cli(['org', 'create', 'fuzz-alpha', '--json'])) as { token: string };
    const beta = JSON.parse(stack.cli(['org', 'create', 'fuzz-beta', '--json'])) as { token: string };

    const call = async (token: string, urlPath: string, body?: unknown) => {
      const res = await fetch(stack.apiUrl + urlPath, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, any>;
      if (!res.ok) throw new Error(`${urlPath} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    const start = async (workflow_type: string, initial_data: Record<string, unknown>) =>
      (await call(alpha.token, '/api/workflows/start', { workflow_type, initial_data })).workflow_id as string;

    const fuzzConnection = { plugin: 'esign', name: 'fuzz', secrets: { api_token: 'fuzz-token' }, config: { base_url: esign.url } };
    const connection = await call(alpha.token, '/api/connections', fuzzConnection);
    await call(beta.token, '/api/connections', fuzzConnection);
    const completed = await start('esign.resources.get-resource-information', { base_url: esign.url });
    // A connection that does not exist fails the run closed at its first provider call.
    const failed = await start('dbhost.endpoints.list', { connection_uuid: randomUUID(), dbhost_project_id: 'fuzz' });
    const running = await start('dbhost.operations.wait', {
      connection_uuid: randomUUID(),
      dbhost_project_id: 'fuzz',
      dbhost_operation_id: 'fuzz',
      poll_interval: 30,
      timeout_seconds: 600,
    });
    for (const [id, status] of [
      [completed, 'COMPLETED'],
      [failed, 'FAILED'],
    ]) {
      await waitFor(`run ${id} to be ${status}`, async () => ((await call(alpha.token, `/api/workflows/${id}`)).status === status ? true : undefined), 30_000, 100);
    }
    return {
      apiUrl: stack.apiUrl,
      identities: [
        { name: 'alpha', token: alpha.token },
        { name: 'beta', token: beta.token },
      ],
      known: { runs: [completed, failed, running], connections: [connection.connection_uuid as string] },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
