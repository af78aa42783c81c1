import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type {
  DagChildActivities,
  EngineWorkflowInput,
  FailedRunDetails,
  ProjectionActivities,
  ResumePoint,
  RunStartedEvent,
  TransitionEvent,
} from '../../workflows/runtime/contract';
import { localEnv, testDataConverter } from '../support/temporal-test-env';
import type { LayerActivities } from './fixtures/dags';

jest.setTimeout(90_000);

const QUEUE = 'dag-test';
const ORG = 'org_dagtest';

/** The Dag runtime on a real Temporal dev server: children are real child workflows of the parent. */
describe('Dag runtime', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const started: RunStartedEvent[] = [];
  const recorded: TransitionEvent[] = [];
  /** Per child workflow id: how its next layerWork calls answer ('ok' when the script runs out). */
  const script: Record<string, Array<'ok' | 'fail' | 'hang' | 'slow'>> = {};
  const work: string[] = [];
  const undone: string[] = [];

  const projection: ProjectionActivities = {
    async projectRunStarted(e) {
      started.push(e);
    },
    async projectTransition(e) {
      recorded.push(e);
    },
  };
  /** As the projection reads a run: its last recorded transition. */
  const dagChildren: DagChildActivities = {
    async projectedRun({ workflow_id }) {
      const last = recorded.filter((e) => e.workflow_id === workflow_id).at(-1);
      if (!last) return null;
      return { status: last.terminal?.status ?? 'RUNNING', attempt: last.attempt, last_seq: last.seq, state_data: last.terminal?.state_data ?? null };
    },
  };
  const layers: LayerActivities = {
    async layerWork({ value }) {
      const { Context } = await import('@temporalio/activity');
      const ctx = Context.current();
      const id = ctx.info.workflowExecution?.workflowId ?? '';
      work.push(id);
      const answer = script[id]?.shift() ?? 'ok';
      if (answer === 'fail') throw ApplicationFailure.nonRetryable(`scripted failure of ${id}`, 'scripted_failure');
      if (answer === 'slow') await new Promise((r) => setTimeout(r, 1_500));
      if (answer === 'hang') {
        while (!ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await new Promise((r) => setTimeout(r, 200));
        }
        throw ctx.cancellationSignal.reason;
      }
      return `${value}+`;
    },
    async undoWork({ value }) {
      undone.push(value);
    },
  };

  beforeAll(async () => {
    env = await localEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      workflowsPath: require.resolve('./fixtures/dags'),
      activities: { ...projection, ...dagChildren, ...layers },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  const transitionsOf = (id: string) => recorded.filter((e) => e.workflow_id === id);
  const input = (initial_data: Record<string, unknown>): EngineWorkflowInput => ({ organization_uuid: ORG, initial_data });
  const start = (type: string, id: string, initial_data: Record<string, unknown>) =>
    env.client.workflow.start(type, { taskQueue: QUEUE, workflowId: id, args: [input(initial_data)] });

  async function failure(result: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    return cause as ApplicationFailure;
  }

  async function until(what: string, check: () => boolean, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** What the run API's retry does: a new execution under the same id, from the failure's checkpoint. */
  async function retry(type: string, id: string, details: FailedRunDetails) {
    const handle = await env.client.workflow.start(type, {
      taskQueue: QUEUE,
      workflowId: id,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ organization_uuid: ORG, initial_data: {}, resume: { reason: 'retry', ...details.checkpoint!, attempt: details.checkpoint!.attempt + 1 } }],
    });
    return handle.result();
  }

  it('runs each layer as a child run of the same organization, id <parent>.<step>, feeding each step the earlier outputs', async () => {
    const id = `wf_dag_ok_${Date.now()}`;
    const result = await (await start('test.dag', id, { value: 'v' })).result();
    expect(result).toMatchObject({
      status: 'succeeded',
      workflow_run_uuid: id,
      first: { value: 'v', result: 'v+' },
      second: { value: 'v+', result: 'v++' },
      third: { value: 'v++', result: 'v+++' },
      final_result: 'v+++',
      compensation_trigger: null,
      compensation_results: null,
    });
    expect(typeof result.completed_at).toBe('string');
    const summary = result.summary as Array<Record<string, unknown>>;
    expect(summary.map((s) => [s.layer, s.step, s.child_workflow_id, s.status, s.attempt])).toEqual([
      ['01_first', 'first', `${id}.first`, 'succeeded', 1],
      ['02_second', 'second', `${id}.second`, 'succeeded', 1],
      ['03_third', 'third', `${id}.third`, 'succeeded', 1],
    ]);
    for (const s of summary) expect(s.duration_ms).toEqual(expect.any(Number));

    const parent = transitionsOf(id);
    expect(parent.map((e) => [e.from, e.action, e.to])).toEqual([
      ['pending', 'validate', 'validated'],
      ['validated', 'start', 'running_first'],
      ['running_first', 'finish_first', 'running_second'],
      ['running_second', 'finish_second', 'running_third'],
      ['running_third', 'finish_third', 'completed'],
    ]);
    // Each transition into a layer's state names the child that runs there.
    expect(JSON.stringify(parent[1].data)).toContain(`${id}.first`);
    expect(JSON.stringify(parent[2].data)).toContain(`${id}.second`);
    expect(parent[2].data).toMatchObject({ first: { result: 'v+' } });
    expect(parent.at(-1)!.terminal).toMatchObject({ status: 'COMPLETED' });

    for (const step of ['first', 'second', 'third']) {
      const child = `${id}.${step}`;
      expect(started.find((e) => e.workflow_id === child)).toMatchObject({ organization_uuid: ORG, workflow_type: 'test.layer-step', attempt: 1 });
      expect(transitionsOf(child).map((e) => e.terminal?.status)).toEqual(['COMPLETED']);
    }
    const desc = await env.client.workflow.getHandle(`${id}.second`).describe();
    expect(desc.parentExecution?.workflowId).toBe(id);
  });

  it('fails the parent at the failed layer, then a retry re-drives only that layer, its child resumed as attempt 2', async () => {
    const id = `wf_dag_retry_${Date.now()}`;
    script[`${id}.third`] = ['fail'];
    const failed = await failure((await start('test.dag', id, { value: 'r' })).result());
    expect(failed.type).toBe('scripted_failure');
    const details = failed.details?.[0] as FailedRunDetails;
    expect(details.output).toMatchObject({
      status: 'failed',
      failure_type: 'scripted_failure',
      failed_step: 'third',
      failed_layer: { layer: '03_third', index: 2, child_workflow_id: `${id}.third`, error: `scripted failure of ${id}.third` },
      failed_at: expect.any(String),
      failed_at_state: 'running_third',
      second: { result: 'r++' },
    });
    expect(details.checkpoint).toMatchObject({ state: 'running_third', next: { action: 'finish_third' }, carry: { third: { state: 'pending' } } });
    const last = transitionsOf(id).at(-1)!;
    expect(last).toMatchObject({ from: 'running_third', to: 'failed', terminal: { status: 'FAILED' } });

    const result = await retry('test.dag', id, details);
    expect(result).toMatchObject({ status: 'succeeded', third: { result: 'r+++' }, final_result: 'r+++' });
    expect(work.filter((w) => w.startsWith(`${id}.`))).toEqual([`${id}.first`, `${id}.second`, `${id}.third`, `${id}.third`]);
    expect(started.filter((e) => e.workflow_id === `${id}.third`).map((e) => e.attempt)).toEqual([1, 2]);
    expect(started.filter((e) => e.workflow_id === `${id}.first`)).toHaveLength(1);
    const thirdSummary = (result.summary as Array<Record<string, unknown>>)[2];
    expect(thirdSummary).toMatchObject({ status: 'succeeded', attempt: 2 });
    const childHistory = transitionsOf(`${id}.third`);
    expect(childHistory.map((e) => [e.seq, e.attempt, e.terminal?.status])).toEqual([
      [1, 1, 'FAILED'],
      [2, 2, 'COMPLETED'],
    ]);
  });

  it('runs the compensations of the completed layers, last first, when layer 3 fails, and records them', async () => {
    const id = `wf_dag_comp_${Date.now()}`;
    script[`${id}.third`] = ['fail'];
    const failed = await failure((await start('test.dag-compensating', id, { value: 'c' })).result());
    const details = failed.details?.[0] as FailedRunDetails;
    expect(undone).toEqual(['c++', 'c+']);
    expect(details.output).toMatchObject({
      failed_step: 'third',
      compensation_trigger: { layer: '03_third', step: 'third', failure_type: 'scripted_failure' },
      compensation_results: [
        { layer: '02_second', step: 'second', workflow_type: 'test.layer-undo', child_workflow_id: `${id}.second.compensation`, status: 'succeeded', error: null },
        { layer: '01_first', step: 'first', workflow_type: 'test.layer-undo', child_workflow_id: `${id}.first.compensation`, status: 'succeeded', error: null },
      ],
    });
    // Compensated layers cannot be resumed: the failure carries no checkpoint.
    expect(details.checkpoint).toBeUndefined();
    expect(transitionsOf(`${id}.second.compensation`).at(-1)!.terminal).toMatchObject({ status: 'COMPLETED' });
  });

  it('cancels the running child with the parent; a retry resumes that child', async () => {
    const id = `wf_dag_cancel_${Date.now()}`;
    script[`${id}.second`] = ['hang'];
    const handle = await start('test.dag', id, { value: 'x' });
    await until('the second layer at work', () => work.includes(`${id}.second`));
    await handle.cancel();
    const failed = await failure(handle.result());
    expect(failed.type).toBe('cancelled');
    const details = failed.details?.[0] as FailedRunDetails;
    expect(details.checkpoint).toMatchObject({ state: 'running_second', next: { action: 'finish_second' }, carry: { second: { state: 'pending' } } });
    // The Dag outputs of a cancelled run: the layer the cancel reached is failed, not left running.
    expect(details.output).toMatchObject({
      workflow_run_uuid: id,
      status: 'failed',
      failure_type: 'cancelled',
      completed_at: null,
      compensation_trigger: null,
      compensation_results: null,
      final_result: null,
    });
    const cancelledSummary = details.output.summary as Array<Record<string, unknown>>;
    expect(cancelledSummary.map((s) => [s.step, s.status, s.attempt, s.child_workflow_id])).toEqual([
      ['first', 'succeeded', 1, `${id}.first`],
      ['second', 'failed', 1, `${id}.second`],
      ['third', 'pending', null, null],
    ]);
    expect(cancelledSummary[1]).toMatchObject({ completed_at: expect.any(String), duration_ms: expect.any(Number) });
    expect(transitionsOf(id).at(-1)!.terminal).toMatchObject({ status: 'CANCELLED', state_data: { status: 'failed', summary: cancelledSummary } });
    expect(transitionsOf(`${id}.second`).at(-1)).toMatchObject({ data: { failure_type: 'cancelled' }, terminal: { status: 'CANCELLED' } });
    const child = await env.client.workflow.getHandle(`${id}.second`).describe();
    expect(child.status.name).toBe('FAILED');

    const result = await retry('test.dag', id, details);
    expect(result).toMatchObject({ status: 'succeeded', final_result: 'x+++' });
    expect(started.filter((e) => e.workflow_id === `${id}.second`).map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('a run the engine fails before any layer (invalid input) still carries the Dag outputs, every layer pending', async () => {
    const id = `wf_dag_invalid_${Date.now()}`;
    const failed = await failure((await start('test.dag', id, { value: 7 })).result());
    expect(failed.type).toBe('invalid_input');
    const output = (failed.details?.[0] as FailedRunDetails).output;
    expect(output).toMatchObject({
      workflow_run_uuid: id,
      status: 'failed',
      failed_step: 'validate',
      completed_at: null,
      compensation_trigger: null,
      compensation_results: null,
      final_result: null,
    });
    expect((output.summary as Array<Record<string, unknown>>).map((s) => [s.step, s.status, s.child_workflow_id])).toEqual([
      ['first', 'pending', null],
      ['second', 'pending', null],
      ['third', 'pending', null],
    ]);
  });

  /** What a Temporal client (or the run API before it refused) does to a child alone: a retry from the checkpoint its failure carried. */
  function retryChildAlone(childId: string, checkpoint: Omit<ResumePoint, 'reason'>) {
    return env.client.workflow.start('test.layer-step', {
      taskQueue: QUEUE,
      workflowId: childId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ organization_uuid: ORG, initial_data: {}, resume: { reason: 'retry', ...checkpoint, attempt: checkpoint.attempt + 1 } }],
    });
  }

  it('a retry of the parent takes the result of a child retried alone since, without running it again', async () => {
    const id = `wf_dag_adopt_done_${Date.now()}`;
    script[`${id}.third`] = ['fail'];
    const details = (await failure((await start('test.dag', id, { value: 'a' })).result())).details?.[0] as FailedRunDetails;
    const childCheckpoint = (details.checkpoint!.carry as Record<string, Omit<ResumePoint, 'reason'>>).third;
    expect(await (await retryChildAlone(`${id}.third`, childCheckpoint)).result()).toMatchObject({ result: 'a+++' });

    const result = await retry('test.dag', id, details);
    expect(result).toMatchObject({ status: 'succeeded', third: { result: 'a+++' }, final_result: 'a+++' });
    expect((result.summary as Array<Record<string, unknown>>)[2]).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(work.filter((w) => w === `${id}.third`)).toHaveLength(2);
    expect(started.filter((e) => e.workflow_id === `${id}.third`).map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('a retry of the parent waits for a child retried alone that is still running, and takes its result', async () => {
    const id = `wf_dag_adopt_running_${Date.now()}`;
    script[`${id}.second`] = ['hang', 'slow'];
    const handle = await start('test.dag', id, { value: 'b' });
    await until('the second layer at work', () => work.includes(`${id}.second`));
    await handle.cancel();
    const details = (await failure(handle.result())).details?.[0] as FailedRunDetails;
    const childCheckpoint = (details.checkpoint!.carry as Record<string, Omit<ResumePoint, 'reason'>>).second;
    const alone = await retryChildAlone(`${id}.second`, childCheckpoint);
    await until('the child retried alone at work', () => work.filter((w) => w === `${id}.second`).length === 2);

    const result = await retry('test.dag', id, details);
    expect(result).toMatchObject({ status: 'succeeded', second: { result: 'b++' }, final_result: 'b+++' });
    expect((result.summary as Array<Record<string, unknown>>)[1]).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(await alone.result()).toMatchObject({ result: 'b++' });
    expect(work.filter((w) => w === `${id}.second`)).toHaveLength(2);
    expect(started.filter((e) => e.workflow_id === `${id}.second`).map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('a dry run checks and plans the layers, starting no child', async () => {
    const id = `wf_dag_dry_${Date.now()}`;
    const result = await (await start('test.dag', id, { value: 'd', dry_run: true })).result();
    expect(result).toMatchObject({ status: 'planned', first: null, second: null, third: null, final_result: null, compensation_results: null });
    expect((result.summary as Array<Record<string, unknown>>).map((s) => [s.step, s.status, s.child_workflow_id])).toEqual([
      ['first', 'planned', null],
      ['second', 'planned', null],
      ['third', 'planned', null],
    ]);
    expect(transitionsOf(id).map((e) => e.action)).toEqual(['validate', 'plan']);
    expect(started.filter((e) => e.workflow_id.startsWith(`${id}.`))).toEqual([]);
  });

  it("a route layer runs the type the earlier step names, fed that step's outputs by field name; null skips it", async () => {
    const id = `wf_dag_route_${Date.now()}`;
    const routed = await (await start('test.dag-routed', id, { value: 'g', route: 'test.layer-step' })).result();
    expect(routed).toMatchObject({ status: 'succeeded', decide: { route_workflow_type: 'test.layer-step' }, routed: { value: 'g', result: 'g+' } });
    expect((routed.summary as Array<Record<string, unknown>>)[1]).toMatchObject({ workflow_type: 'test.layer-step', status: 'succeeded', child_workflow_id: `${id}.routed` });

    const skipId = `wf_dag_skip_${Date.now()}`;
    const skipped = await (await start('test.dag-routed', skipId, { value: 's', route: null })).result();
    expect(skipped).toMatchObject({ status: 'succeeded', routed: null });
    expect((skipped.summary as Array<Record<string, unknown>>)[1]).toMatchObject({ workflow_type: null, status: 'skipped', child_workflow_id: null });
    expect(started.filter((e) => e.workflow_id === `${skipId}.routed`)).toEqual([]);
  });
});
