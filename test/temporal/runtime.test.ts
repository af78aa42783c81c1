import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { FailedRunDetails, ProjectionActivities, RunStartedEvent, TransitionEvent } from '../../workflows/runtime/contract';
import { testDataConverter, timeSkippingEnv } from '../support/temporal-test-env';
import type { ProbeActivities } from './fixtures/machines';

/**
 * The state-machine runtime on Temporal's time-skipping test server: delays of
 * minutes pass in milliseconds, yet run through real durable timers.
 */
describe('state-machine runtime', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const started: RunStartedEvent[] = [];
  const recorded: TransitionEvent[] = [];
  let answers: Record<string, string[]> = {};

  const projection: ProjectionActivities = {
    async projectRunStarted(e) {
      started.push(e);
    },
    async projectTransition(e) {
      recorded.push(e);
    },
  };
  const probeActivities: ProbeActivities = {
    async probe({ count }) {
      const { Context } = await import('@temporalio/activity');
      const script = answers[Context.current().info.workflowExecution?.workflowId ?? ''] ?? [];
      return script[count - 1] ?? 'pending';
    },
  };

  beforeAll(async () => {
    env = await timeSkippingEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: 'runtime-test',
      workflowsPath: require.resolve('./fixtures/machines'),
      activities: { ...projection, ...probeActivities },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  const transitionsOf = (id: string) => recorded.filter((e) => e.workflow_id === id);

  it('takes scheduled transitions after durable timers and counts polls', async () => {
    answers = { 'wf_poll_ok': ['pending', 'pending', 'done'] };
    const before = await env.currentTimeMs();
    const result = await env.client.workflow.execute('test.poller', {
      taskQueue: 'runtime-test',
      workflowId: 'wf_poll_ok',
      args: [{ organization_uuid: 'org_test', initial_data: { interval: 60, token: 'hush' } }],
    });
    const elapsed = (await env.currentTimeMs()) - before;
    expect(elapsed).toBeGreaterThanOrEqual(180_000);
    expect(result).toMatchObject({ poll_count: 3, last_answer: 'done', token: '[redacted]' });
    const steps = transitionsOf('wf_poll_ok');
    expect(steps.map((e) => [e.seq, e.from, e.action, e.to])).toEqual([
      [1, 'pending', 'start', 'waiting'],
      [2, 'waiting', 'poll', 'waiting'],
      [3, 'waiting', 'poll', 'waiting'],
      [4, 'waiting', 'poll', 'waiting'],
      [5, 'waiting', 'finish', 'completed'],
    ]);
    expect(steps[4].terminal).toEqual({ status: 'COMPLETED', state_data: expect.objectContaining({ poll_count: 3, token: '[redacted]' }) });
    expect(JSON.stringify(steps)).not.toContain('hush');
    expect(started.filter((e) => e.workflow_id === 'wf_poll_ok')).toHaveLength(1);
  });

  it('fails from a later state through the fail action, stamping the failure fields', async () => {
    answers = { 'wf_poll_boom': ['pending', 'explode'] };
    const error = await env.client.workflow
      .execute('test.poller', {
        taskQueue: 'runtime-test',
        workflowId: 'wf_poll_boom',
        args: [{ organization_uuid: 'org_test', initial_data: { interval: 5 } }],
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('probe_failed');
    const details = cause.details?.[0] as FailedRunDetails;
    expect(details.checkpoint).toMatchObject({ state: 'waiting', seq: 3, attempt: 1, next: { action: 'poll', delay_seconds: 0 } });
    expect(details.checkpoint!.data).not.toHaveProperty('failure_reason');
    expect(details.output).toMatchObject({
      failure_reason: 'probe exploded',
      failure_type: 'probe_failed',
      failed_step: 'poll',
      failed_layer: 'provider',
      failed_at_state: 'waiting',
      failed_action: 'poll',
      poll_count: 2,
    });
    const last = transitionsOf('wf_poll_boom').at(-1)!;
    expect([last.seq, last.from, last.action, last.to, last.terminal?.status]).toEqual([3, 'waiting', 'fail', 'failed', 'FAILED']);
  });

  it('ends FAILED through a non-success terminal action, keeping a checkpoint before it', async () => {
    answers = { 'wf_poll_broken': ['broken'] };
    const error = await env.client.workflow
      .execute('test.poller', {
        taskQueue: 'runtime-test',
        workflowId: 'wf_poll_broken',
        args: [{ organization_uuid: 'org_test', initial_data: { interval: 5 } }],
      })
      .catch((e) => e);
    const details = ((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0] as FailedRunDetails;
    expect(details.checkpoint).toMatchObject({ state: 'waiting', next: { action: 'poll', delay_seconds: 0 } });
    expect(details.output).toMatchObject({ failure_type: 'broken', failure_reason: 'probe broke' });
    expect(transitionsOf('wf_poll_broken').at(-1)).toMatchObject({ action: 'give_up', to: 'failed', terminal: { status: 'FAILED' } });
  });

  it('resumes from a checkpoint with seq continuing and the attempt incremented', async () => {
    answers = { 'wf_poll_resume': ['done'] };
    const result = await env.client.workflow.execute('test.poller', {
      taskQueue: 'runtime-test',
      workflowId: 'wf_poll_resume',
      args: [
        {
          organization_uuid: 'org_test',
          initial_data: {},
          resume: { reason: 'retry', state: 'waiting', data: { interval: 5, poll_count: 0 }, seq: 7, attempt: 1 + 1, next: { action: 'poll', delay_seconds: 5 } },
        },
      ],
    });
    expect(result).toMatchObject({ poll_count: 1, last_answer: 'done' });
    expect(transitionsOf('wf_poll_resume').map((e) => [e.seq, e.attempt, e.action])).toEqual([
      [8, 2, 'poll'],
      [9, 2, 'finish'],
    ]);
    expect(started.find((e) => e.workflow_id === 'wf_poll_resume')).toMatchObject({ attempt: 2, state_name: 'waiting' });
  });

  it('fails invalid input through the fail action without running any step', async () => {
    const error = await env.client.workflow
      .execute('test.poller', {
        taskQueue: 'runtime-test',
        workflowId: 'wf_poll_invalid',
        args: [{ organization_uuid: 'org_test', initial_data: { interval: 0, extra: true } }],
      })
      .catch((e) => e);
    const { output, checkpoint } = ((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0] as FailedRunDetails;
    expect(checkpoint).toBeUndefined();
    expect(output.failure_type).toBe('invalid_input');
    expect(String(output.failure_reason)).toContain('initial_data.interval');
    expect(transitionsOf('wf_poll_invalid').map((e) => e.action)).toEqual(['fail']);
  });
});
