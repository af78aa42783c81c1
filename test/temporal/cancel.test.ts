import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Agent } from 'undici';
import { callProvider } from '../../activities/provider-http';
import type { FailedRunDetails, ProjectionActivities, TransitionEvent } from '../../workflows/runtime/contract';
import { localEnv, testDataConverter } from '../support/temporal-test-env';
import type { HangingCallActivities } from './fixtures/cancellable';

jest.setTimeout(60_000);

const QUEUE = 'cancel-test';

/** The runtime's cancellation path on a real Temporal dev server: real timers, real heartbeats. */
describe('cancelling a run', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let provider: http.Server;
  const recorded: TransitionEvent[] = [];
  /** Per request to the hanging provider: when it arrived and when the caller gave up on it. */
  const calls: Array<{ arrived: number; closed?: number }> = [];

  const projection: ProjectionActivities = {
    async projectRunStarted() {},
    async projectTransition(e) {
      recorded.push(e);
    },
  };

  beforeAll(async () => {
    provider = http.createServer((req) => {
      const call: { arrived: number; closed?: number } = { arrived: Date.now() };
      calls.push(call);
      req.socket.on('close', () => {
        call.closed = Date.now();
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const dispatcher = new Agent();
    const hanging: HangingCallActivities = {
      callHangingProvider: ({ url }) => callProvider({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 50_000, dispatcher }, { method: 'GET', url, provider: 'hanging' }),
    };
    env = await localEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      workflowsPath: require.resolve('./fixtures/cancellable'),
      activities: { ...projection, ...hanging, probe: async () => 'pending' },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
    provider?.closeAllConnections();
    await new Promise((resolve) => provider?.close(resolve));
  });

  const transitionsOf = (id: string) => recorded.filter((e) => e.workflow_id === id);

  async function until(what: string, check: () => boolean, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function cancelledFailure(result: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return cause as ApplicationFailure;
  }

  it('cancels a durable timer at once and fails the run as cancelled, CANCELLED, with a checkpoint on the pending action', async () => {
    const id = `wf_cancel_timer_${Date.now()}`;
    const handle = await env.client.workflow.start('test.poller', {
      taskQueue: QUEUE,
      workflowId: id,
      args: [{ organization_uuid: 'org_test', initial_data: { interval: 3600, token: 'hush' } }],
    });
    await until('the first transition', () => transitionsOf(id).length === 1);
    const requested = Date.now();
    await handle.cancel();
    const failure = await cancelledFailure(handle.result());
    expect(Date.now() - requested).toBeLessThan(5_000);
    expect(failure.type).toBe('cancelled');
    const details = failure.details?.[0] as FailedRunDetails;
    expect(details.checkpoint).toMatchObject({ state: 'waiting', seq: 2, attempt: 1, next: { action: 'poll', delay_seconds: 3600 } });
    expect(details.output).toMatchObject({ failure_type: 'cancelled', token: '[redacted]' });
    const last = transitionsOf(id).at(-1)!;
    expect(last).toMatchObject({ seq: 2, from: 'waiting', to: 'failed', action: 'fail' });
    expect(last.data).toMatchObject({ failure_type: 'cancelled', failed_step: 'cancel', failed_layer: 'engine', failed_at_state: 'waiting' });
    expect(last.terminal).toMatchObject({ status: 'CANCELLED', state_data: { failure_type: 'cancelled', token: '[redacted]' } });
  });

  it('reaches a provider call in flight through its heartbeat, aborting the request', async () => {
    const id = `wf_cancel_call_${Date.now()}`;
    const { port } = provider.address() as AddressInfo;
    const before = calls.length;
    const handle = await env.client.workflow.start('test.hanging-call', {
      taskQueue: QUEUE,
      workflowId: id,
      args: [{ organization_uuid: 'org_test', initial_data: { url: `http://127.0.0.1:${port}/slow` } }],
    });
    await until('the provider call', () => calls.length > before);
    const call = calls[before];
    expect(call.closed).toBeUndefined();
    const requested = Date.now();
    await handle.cancel();
    const failure = await cancelledFailure(handle.result());
    expect(failure.type).toBe('cancelled');
    expect((failure.details?.[0] as FailedRunDetails).checkpoint).toMatchObject({ state: 'pending', next: { action: 'call' } });
    await until('the provider call to be aborted', () => call.closed !== undefined, 10_000);
    expect(call.closed! - requested).toBeLessThan(8_000);
    expect(transitionsOf(id).map((e) => [e.action, e.to, e.terminal?.status])).toEqual([['fail', 'failed', 'CANCELLED']]);
  });
});
