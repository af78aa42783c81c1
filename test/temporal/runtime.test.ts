import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { WRITE_AHEAD_HEADER } from '../../workflows/runtime/write-ahead';
import { type FailedRunDetails, PROJECTION_REJECTED, type ProjectionActivities, type RunStartedEvent, type TransitionEvent } from '../../workflows/runtime/contract';
import { engineWiring } from '../support/engine-wiring';
import { testDataConverter, timeSkippingEnv } from '../support/temporal-test-env';
import type { ProbeActivities, StepActivities } from './fixtures/machines';

type WorkerWiring = (projection: ProjectionActivities) => Pick<WorkerOptions, 'interceptors' | 'sinks'>;

/** As a worker without the engine's interceptors runs, and as src/worker/worker.ts wires one. */
const WIRINGS: [string, WorkerWiring, boolean][] = [
  ['each transition written by its local activity', () => ({}), false],
  [
    'transitions written ahead by the next step',
    (projection) => engineWiring(projection),
    true,
  ],
];

/**
 * The state-machine runtime on Temporal's time-skipping test server: delays of
 * minutes pass in milliseconds, yet run through real durable timers.
 */
describe.each(WIRINGS)('state-machine runtime, %s', (_wiring, wire, writesAhead) => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const started: RunStartedEvent[] = [];
  const recorded: TransitionEvent[] = [];
  let answers: Record<string, string[]> = {};
  /** Per run: which transitions the database refuses for good, or fails to answer a few times. */
  const refused: Record<string, (e: TransitionEvent) => boolean> = {};
  const outages: Record<string, number> = {};

  const projection: ProjectionActivities = {
    async projectRunStarted(e) {
      started.push(e);
    },
    async projectTransition(e) {
      if (refused[e.workflow_id]?.(e)) {
        throw ApplicationFailure.nonRetryable(`the database refused to store transition ${e.seq} (SQLSTATE 22P02)`, PROJECTION_REJECTED);
      }
      if ((outages[e.workflow_id] ?? 0) > 0) {
        outages[e.workflow_id] -= 1;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
      }
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
  const stepsRan: string[] = [];
  const stepActivities: StepActivities = {
    async step({ name }) {
      const { Context } = await import('@temporalio/activity');
      const id = Context.current().info.workflowExecution?.workflowId ?? '';
      stepsRan.push(`${id}:${name}`);
      const start = started.some((e) => e.workflow_id === id) ? [0] : [];
      return [...start, ...transitionsOf(id).map((e) => e.seq)];
    },
  };

  beforeAll(async () => {
    env = await timeSkippingEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: 'runtime-test',
      workflowsPath: require.resolve('./fixtures/machines'),
      activities: { ...projection, ...probeActivities, ...stepActivities },
      ...wire(projection),
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

  it("projects its start with the owner and schedule its memo carries, so the owner does not depend on the API's own write", async () => {
    answers = { wf_owned: ['done'] };
    const owner = { end_user_uuid: 'usr_owner', client_uuid: 'cli_owner' };
    await env.client.workflow.execute('test.poller', {
      taskQueue: 'runtime-test',
      workflowId: 'wf_owned',
      args: [{ organization_uuid: 'org_test', initial_data: { interval: 1, token: 't' } }],
      memo: { end_user: owner, schedule_id: 'sch_owned' },
    });
    expect(started.find((e) => e.workflow_id === 'wf_owned')).toMatchObject({ owner, schedule_id: 'sch_owned' });
    expect(started.find((e) => e.workflow_id === 'wf_poll_ok')?.owner).toBeUndefined();
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

  it.each([
    ['an unknown field', 'wf_invalid_unknown', { interval: 0, token: 'tok_SECRET_1', password: 'pw_SECRET_2' }, { token: '[redacted]' }],
    ['a secret field of the wrong type', 'wf_invalid_secret_type', { interval: 5, token: 12345678, extra: 1 }, { interval: 5 }],
  ])('keeps of invalid input only its schema fields with accepted values, secrets redacted: %s', async (_, id, initial_data, kept) => {
    const { output } = await failureOf(id, initial_data);
    const failureFields = ['error', 'error_type', 'failed_action', 'failed_at_state', 'failed_layer', 'failed_step', 'failure_reason', 'failure_type'];
    expect(Object.keys(output).sort()).toEqual([...Object.keys(kept), ...failureFields].sort());
    expect(output).toMatchObject(kept);
    const [fail] = transitionsOf(id);
    expect(fail.terminal?.state_data).toEqual(output);
    const shown = JSON.stringify([output, fail]);
    for (const secret of ['SECRET', '12345678']) expect(shown).not.toContain(secret);
  });

  it('holds a run started after an input became stricter to the stricter schema', async () => {
    const start = (workflowId: string, initial_data: Record<string, unknown>) =>
      env.client.workflow.execute('test.stricter', { taskQueue: 'runtime-test', workflowId, args: [{ organization_uuid: 'org_test', initial_data }] });
    expect(await start('wf_stricter_ok', { name: 'x' })).toMatchObject({ greeting: 'hello x' });
    const error = await start('wf_stricter_missing', {}).catch((e) => e);
    const { output } = ((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0] as FailedRunDetails;
    expect(output).toMatchObject({ failure_type: 'invalid_input', failure_reason: 'initial_data.name: is required' });
  });

  const failureOf = async (workflowId: string, initial_data: Record<string, unknown> = { interval: 5 }) => {
    const error = await env.client.workflow
      .execute('test.poller', { taskQueue: 'runtime-test', workflowId, args: [{ organization_uuid: 'org_test', initial_data }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    return ((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0] as FailedRunDetails;
  };

  it('fails the run (projection_rejected) when the database refuses a transition for its data, without a gap in seq', async () => {
    answers = { wf_refused_step: ['pending'] };
    refused.wf_refused_step = (e) => e.action === 'poll';
    const { output, checkpoint } = await failureOf('wf_refused_step');
    expect(output).toMatchObject({ failure_type: 'projection_rejected', failed_step: 'poll', failed_at_state: 'waiting', failed_layer: 'projection' });
    expect(output.failure_reason).toBe('the database refused to store transition 2 (SQLSTATE 22P02)');
    expect(output).not.toHaveProperty('last_answer');
    expect(checkpoint).toMatchObject({ state: 'waiting', seq: 2, next: { action: 'poll' } });
    const steps = transitionsOf('wf_refused_step');
    expect(steps.map((e) => [e.seq, e.action, e.to, e.terminal?.status])).toEqual([
      [1, 'start', 'waiting', undefined],
      [2, 'fail', 'failed', 'FAILED'],
    ]);
    expect(steps[1].terminal?.state_data).not.toHaveProperty('last_answer');
  });

  it('still ends the run FAILED when the database refuses the failure itself, with the failure fields alone', async () => {
    answers = { wf_refused_fail: ['explode'] };
    refused.wf_refused_fail = (e) => e.action === 'fail' && e.data.failure_type === 'probe_failed';
    const { output } = await failureOf('wf_refused_fail');
    expect(output).toMatchObject({ failure_type: 'projection_rejected', failed_action: 'poll' });
    const last = transitionsOf('wf_refused_fail').at(-1)!;
    expect([last.seq, last.action, last.terminal?.status]).toEqual([2, 'fail', 'FAILED']);
    expect(last.terminal?.state_data).toEqual(last.data);
    expect(Object.keys(last.data).sort()).toEqual(
      ['error', 'error_type', 'failed_action', 'failed_at_state', 'failed_layer', 'failed_step', 'failure_reason', 'failure_type'].sort(),
    );
  });

  it('keeps retrying a projection write through a database outage, losing nothing', async () => {
    answers = { wf_outage: ['done'] };
    outages.wf_outage = 3;
    await env.client.workflow.execute('test.poller', {
      taskQueue: 'runtime-test',
      workflowId: 'wf_outage',
      args: [{ organization_uuid: 'org_test', initial_data: { interval: 5 } }],
    });
    expect(outages.wf_outage).toBe(0);
    expect(transitionsOf('wf_outage').map((e) => [e.seq, e.action])).toEqual([
      [1, 'start'],
      [2, 'poll'],
      [3, 'finish'],
    ]);
  });

  it.each([
    ['a lone surrogate in a value', 'wf_ill_formed_value', { interval: 5, token: 'a\ud800' }, 'initial_data.token'],
    ['a lone surrogate in a key', 'wf_ill_formed_key', { interval: 5, ['\udc00']: 1 }, 'initial_data.\\udc00'],
  ])('fails a direct start carrying %s as invalid_input naming the field', async (_, id, initial_data, field) => {
    const { output, checkpoint } = await failureOf(id, initial_data);
    expect(checkpoint).toBeUndefined();
    expect(output.failure_type).toBe('invalid_input');
    expect(output.failure_reason).toBe(`${field}: must be well-formed Unicode (no lone surrogate, U+D800 to U+DFFF without its pair)`);
    expect(transitionsOf(id).map((e) => e.action)).toEqual(['fail']);
    expect(String(output.failure_reason).isWellFormed()).toBe(true);
  });
  const runSteps = (workflowId: string) =>
    env.client.workflow.execute('test.steps', { taskQueue: 'runtime-test', workflowId, args: [{ organization_uuid: 'org_test', initial_data: {} }] });

  it('has every transition in the projection before the step after it runs', async () => {
    const result = await runSteps('wf_steps');
    expect(result).toMatchObject({ first: [0], second: [0, 1], third: [0, 1, 2] });
    expect(transitionsOf('wf_steps').map((e) => [e.seq, e.action, e.to])).toEqual([
      [1, 'first', 'two'],
      [2, 'second', 'three'],
      [3, 'third', 'completed'],
    ]);
    const history = await env.client.workflow.getHandle('wf_steps').fetchHistory();
    const { events } = history;
    const localWrites = events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    const carried = events!.filter((e) => e.activityTaskScheduledEventAttributes?.header?.fields?.[WRITE_AHEAD_HEADER]);
    // Written ahead: the start by the first step, transitions 1 and 2 by the steps after them, the end by a local activity.
    expect([localWrites.length, carried.length]).toEqual(writesAhead ? [1, 3] : [4, 0]);
    const states = events!.flatMap((e) => {
      const value = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.EngineStateName?.data;
      return value ? [JSON.parse(Buffer.from(value).toString())] : [];
    });
    // The state attribute: at every transition, or where the run rests (here its start and its end).
    expect(states).toEqual(writesAhead ? ['one', 'completed'] : ['one', 'two', 'three', 'completed']);
    const replay = { workflowsPath: require.resolve('./fixtures/machines'), dataConverter: testDataConverter, replayName: 'runtime-steps', ...wire(projection) };
    await expect(Worker.runReplayHistory(replay, history, 'wf_steps')).resolves.toBeUndefined();
  });

  it('runs no step after a transition the database refused, and fails the run before it', async () => {
    refused.wf_steps_refused = (e) => e.action === 'first';
    const error = await runSteps('wf_steps_refused').catch((e) => e);
    const { output, checkpoint } = ((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0] as FailedRunDetails;
    expect(output).toMatchObject({ failure_type: 'projection_rejected', failed_step: 'first', failed_at_state: 'one', failed_layer: 'projection' });
    expect(output).not.toHaveProperty('first');
    expect(checkpoint).toMatchObject({ state: 'one', seq: 1, next: { action: 'first' } });
    expect(stepsRan.filter((s) => s.startsWith('wf_steps_refused:'))).toEqual(['wf_steps_refused:first']);
    expect(transitionsOf('wf_steps_refused').map((e) => [e.seq, e.action, e.from])).toEqual([[1, 'fail', 'one']]);
  });

  it('pauses at a transition through a database outage, running each step once and losing nothing', async () => {
    outages.wf_steps_outage = 3;
    const result = await runSteps('wf_steps_outage');
    expect(outages.wf_steps_outage).toBe(0);
    expect(result).toMatchObject({ second: [0, 1], third: [0, 1, 2] });
    expect(stepsRan.filter((s) => s.startsWith('wf_steps_outage:'))).toEqual(['first', 'second', 'third'].map((n) => `wf_steps_outage:${n}`));
    expect(transitionsOf('wf_steps_outage').map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});
