import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { compileComposition } from '../../src/compositions/compile';
import { compositionBodySchema } from '../../src/compositions/composition-body';
import { COMPOSED_WORKFLOW } from '../../workflows/constants';
import type { ComposedRunInput } from '../../workflows/composition/definition';
import type { ProjectionActivities, TransitionEvent } from '../../workflows/runtime/contract';
import { localEnv, testDataConverter } from '../support/temporal-test-env';
import { fixtureLookup } from './fixtures/compositions';

jest.setTimeout(90_000);

const QUEUE = 'composition-route-test';
const ORG = 'org_routetest';

/** A composed run's route step on a real dev server: the routed type runs as the step's child, or the step is skipped. */
describe('composed run with a route step', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const recorded: TransitionEvent[] = [];
  const projection: ProjectionActivities = {
    async projectRunStarted() {},
    async projectTransition(e) {
      recorded.push(e);
    },
  };

  beforeAll(async () => {
    env = await localEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      workflowsPath: require.resolve('./fixtures/compositions'),
      activities: projection,
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  function composition(routeInputs: Record<string, unknown>) {
    const body = compositionBodySchema.parse({
      name: 'route test',
      steps: [
        { id: 'classify', workflow_type: 'test.classify', inputs: { payload: { from: 'input', name: 'payload' } } },
        { id: 'then', workflow_type: 'route', inputs: routeInputs },
      ],
    });
    const compiled = compileComposition(body.steps, fixtureLookup);
    if (!('plan' in compiled)) throw new Error(JSON.stringify(compiled.problems));
    return { composition_uuid: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b', version: 1, name: body.name, exposed_to_end_users: false, plan: compiled.plan };
  }

  const run = (id: string, payload: string, routeInputs: Record<string, unknown> = {}) => {
    const input: ComposedRunInput = { organization_uuid: ORG, initial_data: { payload }, composition: composition(routeInputs) };
    return env.client.workflow.execute(COMPOSED_WORKFLOW, { taskQueue: QUEUE, workflowId: id, args: [input] });
  };

  it("runs the routed type with the earlier step's outputs matched by field name; explicit mappings override", async () => {
    const output = await run('wf_route_default', 'alice', { note: { const: 'explicit' } });
    expect(output.then).toMatchObject({ customer_id: 'cus_alice', amount: 42, note: 'explicit', seen: 'cus_alice|42|explicit' });
    expect(output.summary).toEqual([
      expect.objectContaining({ step: 'classify', status: 'succeeded' }),
      expect.objectContaining({ step: 'then', status: 'succeeded', workflow_type: 'test.target', child_workflow_id: 'wf_route_default.then' }),
    ]);
    const child = await env.client.workflow.getHandle('wf_route_default.then').describe();
    expect(child.type).toBe('test.target');

    const overridden = await run('wf_route_override', 'bob', { customer_id: { const: 'cus_explicit' } });
    expect(overridden.then).toMatchObject({ customer_id: 'cus_explicit', seen: 'cus_explicit|42|' });
    const parent = recorded.filter((e) => e.workflow_id === 'wf_route_override');
    expect(parent[0].workflow_type).toBe(`virtual.6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b@1`);
  });

  it('skips the route step when route_workflow_type is null and completes', async () => {
    const output = await run('wf_route_none', 'none');
    expect(output.status).toBe('succeeded');
    expect(output.then).toBeNull();
    expect(output.summary[1]).toMatchObject({ step: 'then', status: 'skipped', workflow_type: null, child_workflow_id: null });
    const children = recorded.filter((e) => e.workflow_id === 'wf_route_none.then');
    expect(children).toEqual([]);
  });

  it('fails a direct start whose composition is malformed, before anything runs', async () => {
    const input = { organization_uuid: ORG, initial_data: { payload: 'x' }, composition: { plan: { layers: [] } } };
    await expect(env.client.workflow.execute(COMPOSED_WORKFLOW, { taskQueue: QUEUE, workflowId: 'wf_route_malformed', args: [input] })).rejects.toMatchObject({
      cause: expect.objectContaining({ type: 'invalid_input' }),
    });
    expect(recorded.filter((e) => e.workflow_id === 'wf_route_malformed')).toEqual([]);
  });
});
