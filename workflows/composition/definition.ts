import { ANY_STATE, defineWorkflow, type StateSpec, type TransitionSpec, type WorkflowDefinition } from '../runtime/definition';
import { compositionFieldRoles, compositionInputSchema, compositionOutputSchema, composedType, type DefinitionLookup, type Plan } from './plan';

export interface CompositionVersion {
  composition_uuid: string;
  version: number;
  name: string;
  exposed_to_end_users: boolean;
  plan: Plan;
}

/** The state a composed run is in while its layer's child runs. */
export const runningState = (step: string) => `running_${step}`;

/** A composed type as the engine sees it: a Dag definition derived from its plan and the built-in types. */
export function compositionDefinition(version: CompositionVersion, lookup: DefinitionLookup): WorkflowDefinition {
  const { input, freeOnly, free } = compositionInputSchema(version.plan, lookup);
  const steps = version.plan.layers.map((l) => l.step);
  const states: Record<string, StateSpec> = { pending: { initial: true, auto_advance: 'start' } };
  const transitions: TransitionSpec[] = [];
  steps.forEach((step, i) => {
    const from = i === 0 ? 'pending' : runningState(steps[i - 1]);
    transitions.push({ from, action: i === 0 ? 'start' : `run_${step}`, to: runningState(step) });
    states[runningState(step)] = { auto_advance: i + 1 < steps.length ? `run_${steps[i + 1]}` : 'complete' };
  });
  transitions.push({ from: runningState(steps[steps.length - 1]), action: 'complete', to: 'completed' });
  states.completed = { terminal: true, success: true };
  states.failed = { terminal: true };
  transitions.push({ from: ANY_STATE, action: 'fail', to: 'failed' });
  return defineWorkflow({
    workflow_type: composedType(version.composition_uuid, version.version),
    version: String(version.version),
    kind: 'Dag',
    description: version.name,
    input,
    output: compositionOutputSchema(version.plan, freeOnly),
    states,
    transitions,
    exposed_to_end_users: version.exposed_to_end_users,
    prerequisites: [],
    ...compositionFieldRoles(free, lookup),
    failure_stamp: 'failed_at',
    actions: {},
  });
}
