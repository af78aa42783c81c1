import { z } from 'zod';
import { allDefinitions, findDefinition, workflowTypes } from '../../workflows/registry';
import { ANY_STATE, defineWorkflow, findTransition, initialState, type WorkflowDefinition } from '../../workflows/runtime/definition';

const atomic = (): WorkflowDefinition => ({
  workflow_type: 'test.atomic',
  version: '1.0',
  kind: 'Atomic',
  description: 'test',
  input: z.object({}),
  output: z.object({}),
  states: {
    pending: { initial: true, auto_advance: 'execute' },
    completed: { terminal: true, success: true },
    failed: { terminal: true },
  },
  transitions: [
    { from: 'pending', action: 'execute', to: 'completed' },
    { from: ANY_STATE, action: 'fail', to: 'failed' },
  ],
  exposed_to_end_users: false,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_at',
  actions: {},
});

describe('workflow definitions', () => {
  it('every registered type is unique, version 1.0 and reachable by the name it is registered under', () => {
    const names = allDefinitions().map((d) => d.workflow_type);
    expect(names).toEqual(workflowTypes);
    expect(new Set(names).size).toBe(names.length);
    for (const d of allDefinitions()) {
      expect(d.version).toBe('1.0');
      expect(findDefinition(d.workflow_type)).toBe(d);
    }
    expect(findDefinition('no.such.type')).toBeUndefined();
    expect(findDefinition('toString')).toBeUndefined();
  });

  it('the bundle exports one workflow per registered type, named for it, and the composed runs', async () => {
    const bundle: Record<string, unknown> = await import('../../workflows');
    const workflows = Object.entries(bundle).filter(([, v]) => typeof v === 'function');
    for (const type of workflowTypes) expect((bundle[type] as { name: string }).name).toBe(type);
    expect((bundle.virtual as { name: string }).name).toBe('virtual');
    for (const [, fn] of workflows) expect([...workflowTypes, 'virtual']).toContain((fn as { name: string }).name);
  });

  it('the esign types have the specified states and transitions', () => {
    for (const name of ['esign.authorizations.delete-user-authorization', 'esign.resources.get-resource-information']) {
      const d = findDefinition(name)!;
      expect(d.kind).toBe('Atomic');
      expect(initialState(d)).toBe('pending');
      expect(d.states).toEqual({
        pending: { initial: true, auto_advance: 'execute' },
        completed: { terminal: true, success: true },
        failed: { terminal: true },
      });
      expect(findTransition(d, 'pending', 'execute')?.to).toBe('completed');
      expect(findTransition(d, 'completed', 'fail')?.to).toBe('failed');
      expect(findTransition(d, 'completed', 'execute')).toBeUndefined();
      expect(d.secret_fields).toEqual(['api_token']);
    }
  });

  it('accepts a well-formed definition', () => {
    expect(() => defineWorkflow(atomic())).not.toThrow();
  });

  it.each<[string, (d: WorkflowDefinition) => void, RegExp]>([
    ['two initial states', (d) => (d.states.completed.initial = true), /exactly one initial state/],
    ['an auto-advance without a transition', (d) => (d.states.pending.auto_advance = 'nope'), /auto-advance nope has no transition/],
    ['a transition to an unknown state', (d) => d.transitions.push({ from: 'pending', action: 'x', to: 'nowhere' }), /unknown to-state nowhere/],
    ['no fail transition', (d) => (d.transitions = d.transitions.filter((t) => t.action !== 'fail')), /fail transition/],
    ['a fail transition into a success state', (d) => (d.transitions[1].to = 'completed'), /fail transition/],
    ['no success state', (d) => (d.states.completed.success = false), /no success state/],
    ['a terminal state that auto-advances', (d) => (d.states.failed.auto_advance = 'execute'), /terminal state cannot auto-advance/],
  ])('rejects %s', (_, mutate, message) => {
    const d = atomic();
    mutate(d);
    expect(() => defineWorkflow(d)).toThrow(message);
  });
});
