import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionStore } from '../../activities/connections';
import { claimEvent, createPaymentsActivities } from '../../activities/payments';
import { createProjection } from '../../activities/projection';
import { SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { paymentEvents } from '../../db/schema';
import { eq } from 'drizzle-orm';
import { engineWorkflowCode } from '../../src/worker/worker';
import { checkoutSession, sign } from '../support/payments-events';
import { localEnv, testDataConverter } from '../support/temporal-test-env';
import { openMigratedPglite } from '../support/pglite';

jest.setTimeout(90_000);

const QUEUE = 'payments-test';
const ORG = 'org_paymentstest';
const SECRET = 'whsec_temporal_suite_only';

/**
 * The receive run's timestamp check when workers lag: a delivery the ingress accepted is judged
 * by the time it arrived, so a chain that waited for a worker past the tolerance still verifies;
 * a run started otherwise is judged by the time it runs.
 */
describe('payments.webhooks.receive and a lagging worker', () => {
  let env: TestWorkflowEnvironment;
  let database: DatabaseHandle;
  let connection: string;
  let worker: Worker;
  let running: Promise<void>;

  beforeAll(async () => {
    env = await localEnv();
    database = await openMigratedPglite();
    const connections = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    connection = (await connections.create(ORG, 'payments', 'lag', { webhook_secret: SECRET }, {}))!.connectionUuid;
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      ...engineWorkflowCode,
      activities: { ...createProjection(database.db), ...createPaymentsActivities({ db: database.db, connections, toleranceSeconds: 300 }) },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await database?.close();
    await env?.teardown();
  });

  /** An event the provider signed an hour ago. */
  function hourOld() {
    const event = checkoutSession();
    const payload = JSON.stringify(event);
    const signedAt = Math.floor(Date.now() / 1000) - 3600;
    return { event, signedAt, initial_data: { cloud_connection_uuid: connection, payload, signature: sign(payload, SECRET, signedAt) } };
  }

  const start = (type: string, workflowId: string, initial_data: Record<string, unknown>) =>
    env.client.workflow.start(type, { taskQueue: QUEUE, workflowId, args: [{ organization_uuid: ORG, initial_data }] });

  it('a chain whose delivery the ingress accepted in time verifies, an hour later', async () => {
    const { event, signedAt, initial_data } = hourOld();
    const chainId = `wf_pay_lag_${randomBytes(4).toString('hex')}`;
    await claimEvent(database.db, { connection_uuid: connection, event_id: event.id, organization_uuid: ORG, workflow_id: chainId });
    await database.db
      .update(paymentEvents)
      .set({ acceptedAt: new Date((signedAt + 5) * 1000) })
      .where(eq(paymentEvents.workflowId, chainId));
    const result = await (await start('payments.webhooks.receiver-chain', chainId, initial_data)).result();
    expect(result).toMatchObject({ status: 'succeeded', receive: { event_id: event.id }, route: { granted: true } });
  });

  it('a run the ingress did not start is judged by the time it runs: TIMESTAMP_OUT_OF_TOLERANCE', async () => {
    const { initial_data } = hourOld();
    const outcome = await (await start('payments.webhooks.receive', `wf_direct_${randomBytes(4).toString('hex')}`, initial_data)).result().catch((e) => e);
    expect(outcome).toBeInstanceOf(WorkflowFailedError);
    expect((outcome as WorkflowFailedError).cause).toMatchObject({ type: 'TIMESTAMP_OUT_OF_TOLERANCE' });
  });
});
