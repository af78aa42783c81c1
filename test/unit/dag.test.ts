import { z } from 'zod';
import { dagOutput, defineDag } from '../../workflows/runtime/dag';
import { type DagPlan, dagPlanSchema, mappedInputs, routeOf } from '../../workflows/runtime/dag-plan';

const plan: DagPlan = {
  layers: [
    { layer: '01_a', step: 'a', workflow_type: 'x.a', inputs: { n: { from: 'input', name: 'n' } } },
    { layer: '02_b', step: 'b', workflow_type: 'x.b', inputs: { id: { from: 'step', step: 'a', field: 'id' }, mode: { const: 'fast' } } },
  ],
};

const spec = (p: DagPlan) => ({
  workflow_type: 'x.dag',
  version: '1.0',
  description: 'x',
  input: z.strictObject({ n: z.number() }),
  output: dagOutput(p, {}),
  plan: p,
  exposed_to_end_users: false,
});

describe('Dag plans', () => {
  it('accepts a plan whose layers read only earlier steps', () => {
    expect(dagPlanSchema.safeParse(plan).success).toBe(true);
  });

  it.each([
    ['a duplicate step', { layers: [plan.layers[0], { ...plan.layers[1], step: 'a' }] }, 'step names must be unique'],
    ['a read of a later step', { layers: [{ ...plan.layers[0], inputs: { id: { from: 'step', step: 'b', field: 'id' } } }, plan.layers[1]] }, 'reads step b'],
    ['a route layer first', { layers: [{ ...plan.layers[0], workflow_type: 'route' }] }, 'a route layer cannot be the first'],
    ['a bad step name', { layers: [{ ...plan.layers[0], step: 'Not OK' }] }, 'lower-case'],
    ['no layers', { layers: [] }, ''],
  ])('refuses %s', (_what, bad, message) => {
    const parsed = dagPlanSchema.safeParse(bad);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error!.issues)).toContain(message);
  });

  it("lets a compensation read its own layer's step", () => {
    const compensated = { layers: [{ ...plan.layers[0], compensation: { workflow_type: 'x.undo', inputs: { id: { from: 'step' as const, step: 'a', field: 'id' } } } }] };
    expect(dagPlanSchema.safeParse(compensated).success).toBe(true);
  });

  it('maps inputs from the run input, earlier steps and constants, leaving out what is absent', () => {
    expect(mappedInputs(plan.layers[1].inputs, { n: 1, a: { id: 'A1' } })).toEqual({ id: 'A1', mode: 'fast' });
    expect(mappedInputs(plan.layers[1].inputs, { n: 1, a: null })).toEqual({ mode: 'fast' });
    expect(mappedInputs(plan.layers[0].inputs, {})).toEqual({});
  });

  it("routes by the nearest earlier step's route_workflow_type; null skips; none leaves it unrouted", () => {
    const routed: DagPlan = { layers: [...plan.layers, { layer: '03_r', step: 'r', workflow_type: 'route', inputs: {} }] };
    expect(routeOf(routed, 2, { a: { route_workflow_type: 'x.first' }, b: { route_workflow_type: 'x.second' } })).toEqual({ type: 'x.second', from: 'b' });
    expect(routeOf(routed, 2, { a: { route_workflow_type: 'x.first' }, b: { other: 1 } })).toEqual({ type: 'x.first', from: 'a' });
    expect(routeOf(routed, 2, { a: {}, b: { route_workflow_type: null } })).toEqual({ type: null, from: 'b' });
    expect(routeOf(routed, 2, { a: {}, b: {} })).toBeUndefined();
  });
});

describe('defineDag', () => {
  it('makes a Dag definition: pending, validated, one running_<step> per layer, completed, failed', () => {
    const def = defineDag(spec(plan));
    expect(def.kind).toBe('Dag');
    expect(Object.keys(def.states)).toEqual(['pending', 'validated', 'completed', 'failed', 'running_a', 'running_b']);
    expect(def.transitions).toEqual([
      { from: 'pending', action: 'validate', to: 'validated' },
      { from: 'validated', action: 'plan', to: 'completed' },
      { from: 'validated', action: 'start', to: 'running_a' },
      { from: 'running_a', action: 'finish_a', to: 'running_b' },
      { from: 'running_b', action: 'finish_b', to: 'completed' },
      { from: '*', action: 'fail', to: 'failed' },
    ]);
    expect(def.plan).toBe(plan);
    expect(def.failure_stamp).toBe('failed_at');
  });

  it('refuses a bad plan when the module loads', () => {
    expect(() => defineDag(spec({ layers: [{ ...plan.layers[0], workflow_type: 'route' }] }))).toThrow(
      'workflow definition x.dag: plan layers.0.workflow_type: a route layer cannot be the first',
    );
  });

  it('types failed_layer as JSON (or the engine\'s own string), and one output field per step', () => {
    const output = dagOutput(plan, {});
    expect(output.safeParse({ failed_layer: { layer: '02_b', index: 1, child_workflow_id: 'wf_1.b', error: 'boom' }, a: { id: 'A1' }, b: null }).success).toBe(true);
    expect(output.safeParse({ failed_layer: 'engine' }).success).toBe(true);
    expect(output.safeParse({ failed_layer: { layer: '02_b' } }).success).toBe(false);
  });
});
