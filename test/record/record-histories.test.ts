import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ConnectionStore } from '../../activities/connections';
import { createDbhostActivities } from '../../activities/dbhost';
import { createEsignActivities } from '../../activities/esign';
import { createIdentityActivities } from '../../activities/identity';
import { createProjection } from '../../activities/projection';
import { SecretBox } from '../../activities/secret-box';
import { type DatabaseHandle, openDatabase, projectRoot } from '../../db/client';
import { endUsers } from '../../db/schema';
import { createLoginSession, sessionIdOf } from '../../src/identity/login-sessions';
import type { EngineWorkflowInput, FailedRunDetails } from '../../workflows/runtime/contract';
import { DBHOST_VALID_TOKEN, startDbhostDouble } from '../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { dispatcherFor } from '../support/outbound';
import { localEnv, testDataConverter } from '../support/temporal-test-env';

/**
 * Not part of `make test`: `make record-histories` runs each workflow type
 * through its paths on a real dev server and writes the histories that the
 * replay test (test/temporal/replay.test.ts) guards determinism with.
 */
const OUT = path.join(projectRoot(), 'test', 'histories');
const TASK_QUEUE = 'record-histories';
const TEMPORAL = path.join(projectRoot(), '.venv', 'bin', 'temporal');

describe('record workflow histories', () => {
  let env: TestWorkflowEnvironment;
  let database: DatabaseHandle;
  let double: Awaited<ReturnType<typeof startEsignDouble>>;
  let dbhostDouble: Awaited<ReturnType<typeof startDbhostDouble>>;
  let connections: ConnectionStore;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    env = await localEnv();
    database = await openDatabase({});
    await database.migrate();
    double = await startEsignDouble();
    dbhostDouble = await startDbhostDouble();
    connections = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: TASK_QUEUE,
      workflowsPath: require.resolve('../../workflows'),
      activities: {
        ...createProjection(database.db),
        ...createEsignActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]) }),
        ...createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([dbhostDouble.url]), connections }),
        ...createIdentityActivities(database.db, 'http://127.0.0.1:3001'),
      },
    });
    running = worker.run();
    fs.mkdirSync(OUT, { recursive: true });
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await double?.close();
    await dbhostDouble?.close();
    await database?.close();
    await env?.teardown();
  });

  async function record(
    name: string,
    workflowType: string,
    input: EngineWorkflowInput,
    workflowId = `wf_record_${name}`,
    meanwhile?: (handle: WorkflowHandle) => Promise<void>,
  ) {
    const handle = await env.client.workflow.start(workflowType, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
    await meanwhile?.(handle);
    const outcome = await handle.result().catch((err) => err);
    // The CLI's JSON is the format historyFromJSON reads (and what engineers export from production).
    const json = execFileSync(TEMPORAL, ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', env.address], {
      encoding: 'utf8',
    });
    fs.writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify(JSON.parse(json), null, 1) + '\n');
    return outcome;
  }

  const org = 'org_recorded';
  const del = (authorizationid: string, api_token?: string) => ({
    organization_uuid: org,
    initial_data: { base_url: double.url, api_token, accountid: '1001', userid: 'user-1', authorizationid },
  });

  it('records each workflow type on its success, failure and retry paths', async () => {
    const type = 'esign.authorizations.delete-user-authorization';
    await record('esign-delete-completed', type, del('ok-1', ESIGN_VALID_TOKEN));
    await record('esign-delete-flaky-completed', type, del('flaky-1', ESIGN_VALID_TOKEN));
    await record('esign-delete-missing-token-failed', type, del('ok-2'));
    const failed = await record('esign-delete-unauthorized-failed', type, del('once401-1', ESIGN_VALID_TOKEN));
    const checkpoint = ((failed as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    await record(
      'esign-delete-retried-completed',
      type,
      { organization_uuid: org, initial_data: {}, resume: { reason: 'retry', ...checkpoint.checkpoint!, attempt: 2 } },
      'wf_record_esign-delete-unauthorized-failed',
    );
    await record('esign-delete-invalid-input-failed', type, { organization_uuid: org, initial_data: { base_url: 'nope' } });
    const get = 'esign.resources.get-resource-information';
    await record('esign-get-completed', get, { organization_uuid: org, initial_data: { base_url: double.url } });
    await record('esign-get-unauthorized-failed', get, { organization_uuid: org, initial_data: { base_url: double.url, api_token: 'wrong' } });
    expect(fs.readdirSync(OUT).filter((f) => f.endsWith('.json')).length).toBeGreaterThanOrEqual(8);
  });

  it('records a run cancelled during its provider call', async () => {
    const type = 'esign.authorizations.delete-user-authorization';
    const cancelInCall = async (handle: WorkflowHandle) => {
      while (!(await handle.describe()).raw.pendingActivities?.length) await new Promise((r) => setTimeout(r, 20));
      await handle.cancel();
    };
    const cancelled = await record('esign-delete-cancelled', type, del('hang-1', ESIGN_VALID_TOKEN), undefined, cancelInCall);
    const checkpoint = ((cancelled as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    expect(checkpoint.checkpoint?.next).toEqual({ action: 'execute', delay_seconds: 0 });
  });

  it('records the dbhost types: poll loops to finished, failed status, deadline, 401 then a retry, endpoints', async () => {
    const create = async (name: string, token: string) =>
      (await connections.create(org, 'dbhost', name, { api_token: token }, { api_url: dbhostDouble.url }))!;
    const ok = (await create('prod', DBHOST_VALID_TOKEN)).connectionUuid;
    const stale = await create('stale', 'wrong-token');
    const wait = 'dbhost.operations.wait';
    const waitFor = (connection_uuid: string, dbhost_operation_id: string, timeout_seconds = 10) => ({
      organization_uuid: org,
      initial_data: { connection_uuid, dbhost_project_id: 'floral-king-961888', dbhost_operation_id, timeout_seconds, poll_interval: 1 },
    });
    await record('dbhost-wait-completed', wait, waitFor(ok, 'finishes-3-rec'));
    await record('dbhost-wait-operation-failed', wait, waitFor(ok, 'fails-2-rec'));
    await record('dbhost-wait-timeout-failed', wait, waitFor(ok, 'never-rec', 2));
    const failed = await record('dbhost-wait-unauthorized-failed', wait, waitFor(stale.connectionUuid, 'finishes-1-rec'));
    // The connection's token is rotated, then the failed run is retried: it re-drives the waiting state's poll.
    await connections.update(stale, { secrets: { api_token: DBHOST_VALID_TOKEN } });
    const checkpoint = ((failed as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    await record(
      'dbhost-wait-retried-completed',
      wait,
      { organization_uuid: org, initial_data: {}, resume: { reason: 'retry', ...checkpoint.checkpoint!, attempt: 2 } },
      'wf_record_dbhost-wait-unauthorized-failed',
    );
    const list = 'dbhost.endpoints.list';
    await record('dbhost-endpoints-completed', list, { organization_uuid: org, initial_data: { connection_uuid: ok, dbhost_project_id: 'floral-king-961888' } });
    await record('dbhost-endpoints-flaky-completed', list, { organization_uuid: org, initial_data: { connection_uuid: ok, dbhost_project_id: 'flaky-rec' } });
    await record('dbhost-endpoints-not-found-failed', list, { organization_uuid: org, initial_data: { connection_uuid: ok, dbhost_project_id: 'missing-rec' } });
  });

  it('records the identity types: provision, configure-client, session revoke, and their failures', async () => {
    const provisioned = await record('identity-provision-completed', 'identity.app.provision', {
      organization_uuid: org,
      initial_data: { name: 'Recorded app', redirect_uris: ['https://app.example.test/callback', 'http://127.0.0.1:5173/cb'] },
    });
    await record('identity-provision-invalid-input-failed', 'identity.app.provision', {
      organization_uuid: org,
      initial_data: { name: 'Bad', redirect_uris: ['http://app.example.test/callback'] },
    });
    const { client_key, client_uuid } = provisioned as { client_key: string; client_uuid: string };
    await record('identity-configure-completed', 'identity.app.configure-client', {
      organization_uuid: org,
      initial_data: { client_key, add_redirect_uris: ['https://app.example.test/other'], remove_redirect_uris: ['http://127.0.0.1:5173/cb'] },
    });
    await record('identity-configure-not-found-failed', 'identity.app.configure-client', {
      organization_uuid: 'org_someone_else',
      initial_data: { client_key, add_redirect_uris: ['https://evil.example.test/cb'] },
    });
    const endUserUuid = 'b6c0a1de-5e11-4c71-9d0e-6d1f0f3c2a10';
    await database.db.insert(endUsers).values({ endUserUuid, organizationUuid: org, clientUuid: client_uuid, email: 'rec@example.test', passwordHash: 'x' });
    const { sid } = await createLoginSession(database.db, { end_user_uuid: endUserUuid, client_uuid, organization_uuid: org });
    await record('identity-revoke-completed', 'identity.end-user.session.revoke', {
      organization_uuid: org,
      initial_data: { sid: sessionIdOf(sid), end_user_uuid: endUserUuid, client_uuid },
    });
    await record('identity-revoke-not-found-failed', 'identity.end-user.session.revoke', {
      organization_uuid: org,
      initial_data: { sid: sessionIdOf(sid) },
    });
  });
});
