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
import { createPaymentsActivities } from '../../activities/payments';
import { createHookActivities } from '../../activities/hooks/activities';
import { createHookPlanCheckActivities } from '../../activities/hooks/plan-check';
import { HookStore } from '../../activities/hooks/store';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createProjection, dagChildReads } from '../../activities/projection';
import { SecretBox } from '../../activities/secret-box';
import { type DatabaseHandle, projectRoot } from '../../db/client';
import { compileComposition } from '../../src/compositions/compile';
import type { ComposedRunInput } from '../../workflows/composition/definition';
import { findDefinition } from '../../workflows/registry';
import { createIdentityActivities } from '../../activities/identity';
import { endUsers } from '../../db/schema';
import { createLoginSession, sessionIdOf } from '../../src/identity/login-sessions';
import type { EngineWorkflowInput, FailedRunDetails } from '../../workflows/runtime/contract';
import { engineWorkflowCode } from '../../src/worker/worker';
import { DBHOST_VALID_TOKEN, startDbhostDouble } from '../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { checkoutSession, invoicePaidCurrent, sign, subscriptionEvent } from '../support/payments-events';
import { startHookTarget } from '../doubles/hook-target';
import { dispatcherFor, outboundAllowFor } from '../support/outbound';
import { startIngressStandIn } from '../support/ingress-stand-in';
import { localEnv, testDataConverter } from '../support/temporal-test-env';
import { openMigratedPglite } from '../support/pglite';
import { engineWiring } from '../support/engine-wiring';

/**
 * Not part of `make test`: `make record-histories` runs each workflow type
 * through its paths on a real dev server, on a worker wired as
 * src/worker/worker.ts wires one, and writes the histories that the replay
 * test (test/temporal/replay.test.ts) guards determinism with, into
 * test/histories/current. Before recording after a patch, move current's
 * files to a directory named for the generation they are (as write-ahead is):
 * they stay, for runs still in flight from then, and so do those directly
 * under test/histories, recorded before transitions were written ahead.
 */
const OUT = path.join(projectRoot(), 'test', 'histories', 'current');
const TASK_QUEUE = 'record-histories';
const TEMPORAL = path.join(projectRoot(), '.venv', 'bin', 'temporal');

describe('record workflow histories', () => {
  let env: TestWorkflowEnvironment;
  let database: DatabaseHandle;
  let double: Awaited<ReturnType<typeof startEsignDouble>>;
  let dbhostDouble: Awaited<ReturnType<typeof startDbhostDouble>>;
  let connections: ConnectionStore;
  let hookStore: HookStore;
  let hookTarget: Awaited<ReturnType<typeof startHookTarget>>;
  let ingress: Awaited<ReturnType<typeof startIngressStandIn>>;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    env = await localEnv();
    database = await openMigratedPglite();
    double = await startEsignDouble();
    dbhostDouble = await startDbhostDouble();
    connections = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    hookStore = new HookStore(database.db, SecretBox.derive(randomBytes(32), 'hook-secrets'));
    hookTarget = await startHookTarget('127.0.0.1');
    ingress = await startIngressStandIn(hookStore);
    const projection = createProjection(database.db);
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: TASK_QUEUE,
      ...engineWorkflowCode,
      ...engineWiring(projection),
      activities: {
        ...projection,
        ...dagChildReads(database.db),
        ...createEsignActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]) }),
        ...createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([dbhostDouble.url]), connections }),
        ...createPaymentsActivities({ db: database.db, connections, toleranceSeconds: 300 }),
        ...createHookActivities({
          allowHttpHosts: ['127.0.0.1'],
          timeoutMs: 1_000,
          dispatcher: dispatcherFor([hookTarget.url]),
          ingressDispatcher: dispatcherFor([ingress.url]),
          outboundAllow: parseOutboundAllow(outboundAllowFor(hookTarget.url)),
          publicApiUrl: ingress.url,
          store: hookStore,
          connections,
        }),
        ...createHookPlanCheckActivities({
          allowHttpHosts: ['127.0.0.1'],
          outboundAllow: parseOutboundAllow(outboundAllowFor(hookTarget.url)),
          publicApiUrl: ingress.url,
          store: hookStore,
          connections,
        }),
        ...createIdentityActivities(database.db, { loginUrl: 'http://127.0.0.1:3001', apiUrl: 'http://127.0.0.1:3000' }),
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
    await hookTarget?.close();
    await ingress?.close();
    await database?.close();
    await env?.teardown();
  });

  /** Writes one execution's history as the Temporal CLI shows it (the format historyFromJSON reads). */
  function writeHistory(name: string, workflowId: string) {
    const json = execFileSync(TEMPORAL, ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', env.address], {
      encoding: 'utf8',
    });
    fs.writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify(JSON.parse(json), null, 1) + '\n');
  }

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
    writeHistory(name, workflowId);
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
    expect(checkpoint.checkpoint?.carry).toEqual({ delete_outcome_unknown: true });
  });

  it('records a DELETE whose every answer was lost (failed timeout), then its retry answered 404 completing already_absent', async () => {
    const type = 'esign.authorizations.delete-user-authorization';
    const failed = await record('esign-delete-lost-failed', type, del('lost4-1', ESIGN_VALID_TOKEN));
    const checkpoint = ((failed as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    expect(checkpoint.checkpoint?.carry).toEqual({ delete_outcome_unknown: true });
    const retried = await record(
      'esign-delete-lost-failed@retried',
      type,
      { organization_uuid: org, initial_data: {}, resume: { reason: 'retry', ...checkpoint.checkpoint!, attempt: 2 } },
      'wf_record_esign-delete-lost-failed',
    );
    expect(retried).toMatchObject({ status_code: 404, already_absent: true });
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

  it('records the payments types: receive (accepted, refused, replayed), grant, and the receiver chain routed and unrouted', async () => {
    const secret = 'whsec_recorded_histories_only';
    const connection = (await connections.create(org, 'payments', 'payments-rec', { webhook_secret: secret }, {}))!.connectionUuid;
    const receiveInput = (payload: string, signature = sign(payload, secret)) => ({
      organization_uuid: org,
      initial_data: { cloud_connection_uuid: connection, payload, signature },
    });
    const receive = 'payments.webhooks.receive';
    const paid = JSON.stringify(invoicePaidCurrent());
    await record('payments-receive-completed', receive, receiveInput(paid));
    await record('payments-receive-replayed-failed', receive, receiveInput(paid));
    await record('payments-receive-mismatch-failed', receive, receiveInput(paid, sign(paid, 'whsec_somebody_else')));
    const grant = 'payments.access.grant_on_payment';
    const grantInput = (event_id: string, client_reference_id: string | null) => ({
      organization_uuid: org,
      initial_data: { event_id, event_type: 'invoice.paid', client_reference_id, customer_id: null, object_id: 'in_rec', event_metadata: {} },
    });
    await record('payments-grant-completed', grant, grantInput('evt_record_grant', 'user_rec'));
    await record('payments-grant-subject-missing-failed', grant, grantInput('evt_record_nobody', null));
    const chain = 'payments.webhooks.receiver-chain';
    const bought = JSON.stringify(checkoutSession('checkout.session.completed', { client_reference_id: 'user_rec_chain' }));
    // A Dag: its replay must see its own workflow id, so the run is named after its file.
    const routed = (await record('payments-chain-granted-completed', chain, receiveInput(bought), 'payments-chain-granted-completed')) as Record<string, any>;
    expect(routed.route).toMatchObject({ subject: 'user_rec_chain', granted: true });
    const unrouted = (await record('payments-chain-unrouted-completed', chain, receiveInput(JSON.stringify(subscriptionEvent())), 'payments-chain-unrouted-completed')) as Record<string, any>;
    expect(unrouted.route).toBeNull();
  });

  it('records the hook types: create (new, name taken), receive, replay (delivered, rejected), acknowledge, expire', async () => {
    const hookRun = (initial_data: Record<string, unknown>) => ({ organization_uuid: org, initial_data });
    hookTarget.answer('/rejecting', 500);
    const created = await record('hook-create-redirect-completed', 'hook.create-redirect', hookRun({ endpoint_name: 'recorded', target_url: `${hookTarget.url}/ok` }));
    await record('hook-create-redirect-name-taken-failed', 'hook.create-redirect', hookRun({ endpoint_name: 'recorded', target_url: `${hookTarget.url}/other` }));
    const endpoint = (created as { endpoint_uuid: string }).endpoint_uuid;
    const received = await record('hook-receive-webhook-completed', 'hook.receive-webhook', hookRun({ endpoint_uuid: endpoint }));
    const event = (received as { event_uuid: string }).event_uuid;
    await record('hook-replay-event-completed', 'hook.replay-event', hookRun({ event_uuid: event }));
    const rejecting = (await hookStore.createEndpoint(org, { name: 'rejecting', targetUrl: `${hookTarget.url}/rejecting`, secret: 'whsec_r', secretSource: 'generated' }))!;
    const pending = await hookStore.insertEvent(rejecting, '{"n":1}', {});
    await record('hook-replay-event-rejected-failed', 'hook.replay-event', hookRun({ event_uuid: pending.eventUuid }));
    await record('hook-acknowledge-event-completed', 'hook.acknowledge-event', hookRun({ event_uuid: event }));
    const expired = await record('hook-expire-pending-events-completed', 'hook.expire-pending-events', hookRun({ endpoint_uuid: rejecting.endpointUuid, ttl_seconds: 0 }));
    expect(expired).toMatchObject({ expired_count: 1, expired_event_uuids: [pending.eventUuid] });
  });

  it('records the webhook Dag and its hook.* children: completed, failed at layer 3 then retried, dry run', async () => {
    const type = 'webhook.endpoint.create-verify-and-replay';
    const steps = ['hook_create_redirect', 'hook_receive_webhook', 'hook_replay_event', 'hook_acknowledge_event', 'hook_expire_pending_events'];
    // A Dag's replay must see its own workflow id (its children's ids derive from it): the file is named after the run.
    const dag = async (name: string, initial_data: Record<string, unknown>, children: string[]) => {
      const outcome = await record(name, type, { organization_uuid: org, initial_data: { organization_uuid: org, ...initial_data } }, name);
      for (const step of children) writeHistory(`${name}.${step}`, `${name}.${step}`);
      return outcome;
    };
    hookTarget.answer('/ok', 200);
    const done = await dag('webhook-dag-completed', { target_url: `${hookTarget.url}/ok`, endpoint_name: 'recorded-ok' }, steps);
    expect(done).toMatchObject({ status: 'succeeded' });
    hookTarget.answer('/down', 500);
    const failed = await dag('webhook-dag-replay-failed', { target_url: `${hookTarget.url}/down`, endpoint_name: 'recorded-down' }, steps.slice(2, 3));
    const checkpoint = ((failed as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    expect(checkpoint.checkpoint).toMatchObject({ state: 'running_hook_replay_event', carry: { hook_replay_event: expect.any(Object) } });
    hookTarget.answer('/down', 200);
    // A second execution of the same workflow id: `<id>@<what>.json` (the replay test reads the id before the @).
    const retried = await record(
      'webhook-dag-replay-failed@retried',
      type,
      { organization_uuid: org, initial_data: {}, resume: { reason: 'retry', ...checkpoint.checkpoint!, attempt: 2 } },
      'webhook-dag-replay-failed',
    );
    expect(retried).toMatchObject({ status: 'succeeded' });
    writeHistory('webhook-dag-replay-failed.hook_replay_event@retried', 'webhook-dag-replay-failed.hook_replay_event');
    await dag('webhook-dag-dry-run', { target_url: `${hookTarget.url}/ok`, endpoint_name: 'recorded-dry-run', dry_run: true }, []);
  });

  it('records a composed run: completed, a failed step, then its retry; one without what a step needs', async () => {
    const compiled = compileComposition(
      [
        { id: 'info', workflow_type: 'esign.resources.get-resource-information', inputs: { base_url: { from: 'input', name: 'base_url' }, api_token: { from: 'input', name: 'api_token' } } },
        {
          id: 'remove',
          workflow_type: 'esign.authorizations.delete-user-authorization',
          inputs: {
            base_url: { from: 'step', step: 'info', field: 'base_url' },
            api_token: { from: 'input', name: 'api_token' },
            accountid: { const: '1001' },
            userid: { const: 'user-1' },
            authorizationid: { from: 'input', name: 'authorizationid' },
          },
        },
      ],
      findDefinition,
    );
    if (!('plan' in compiled)) throw new Error(JSON.stringify(compiled.problems));
    const composition = { composition_uuid: '0b7c6a3e-8d1f-4c2a-9e5b-1a2b3c4d5e6f', version: 1, name: 'recorded', exposed_to_end_users: false, plan: compiled.plan };
    const composed = (authorizationid: string): ComposedRunInput => ({
      organization_uuid: org,
      initial_data: { base_url: double.url, api_token: ESIGN_VALID_TOKEN, authorizationid },
      composition,
    });
    // Named after the run's workflow id, which the steps' child ids derive from (see the webhook Dag above).
    await record('virtual-completed', 'virtual', composed('ok-virtual'), 'virtual-completed');
    const failed = await record('virtual-step-failed', 'virtual', composed('once401-virtual'), 'virtual-step-failed');
    const checkpoint = ((failed as WorkflowFailedError).cause as { details?: unknown[] }).details?.[0] as FailedRunDetails;
    expect(checkpoint.checkpoint?.carry).toHaveProperty('remove');
    const retried: ComposedRunInput = { organization_uuid: org, initial_data: {}, composition, resume: { reason: 'retry', ...checkpoint.checkpoint!, attempt: 2 } };
    const outcome = await record('virtual-step-failed@retried', 'virtual', retried, 'virtual-step-failed');
    expect(outcome).toMatchObject({ status: 'succeeded', remove: { status_code: 204 } });
    // Without base_url, which step info needs (having no connection_uuid): refused before any step, where code before the patch ran info to its invalid_input.
    const { base_url: _, ...unmet } = composed('unmet-virtual').initial_data;
    const refused = await record('virtual-requirement-unmet-failed', 'virtual', { ...composed('unmet-virtual'), initial_data: unmet }, 'virtual-requirement-unmet-failed');
    expect((refused as WorkflowFailedError).cause).toMatchObject({ type: 'invalid_input' });
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
