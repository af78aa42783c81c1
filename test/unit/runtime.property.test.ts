import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import fc from 'fast-check';
import { z } from 'zod';
import { requestHash } from '../../src/runs/run-ids';
import {
  ANY_STATE,
  REDACTED,
  type StateSpec,
  type TransitionSpec,
  type WorkflowDefinition,
  defineWorkflow,
  findTransition,
} from '../../workflows/runtime/definition';
import { classifyFailure, StepFailure } from '../../workflows/runtime/failure';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { redact } from '../../workflows/runtime/redact';

/**
 * Property-based tests (fast-check) of the pure parts of the state-machine runtime and of the
 * Idempotency-Key body hash. FC_RUNS_FACTOR multiplies the number of runs (`make fuzz`).
 */
const runs = (n: number) => ({ numRuns: n * Number(process.env.FC_RUNS_FACTOR || 1) });

const FAILURE_FIELDS = ['failure_reason', 'failure_type', 'failed_step', 'failed_layer', 'failed_at_state', 'error', 'error_type'].sort();

// --- definitions ---------------------------------------------------------------------------

const STATE_NAMES = ['a', 'b', 'c', 'd', 'e'];
const ACTIONS = ['go', 'next', 'poll', 'finish', 'fail'];

function definitionOf(states: Record<string, StateSpec>, transitions: TransitionSpec[]): WorkflowDefinition {
  return {
    workflow_type: 'test.generated',
    version: '1.0',
    kind: 'Linear',
    description: 'generated',
    input: z.object({}),
    output: z.object({}),
    states,
    transitions,
    exposed_to_end_users: false,
    prerequisites: [],
    secret_fields: [],
    outbound_url_fields: [],
    failure_stamp: 'failed_at',
    actions: {},
  };
}

/**
 * Definitions that are well formed by construction: a chain of states from the initial one to
 * `done` (success), `failed`, a fail transition from any state, random extra transitions among
 * known states (never `fail`), and auto-advance / retry actions picked among each state's own
 * transitions.
 */
const wellFormed: fc.Arbitrary<WorkflowDefinition> = fc
  .record({
    length: fc.integer({ min: 1, max: 4 }),
    extra: fc.array(fc.record({ from: fc.nat(5), action: fc.constantFrom(...ACTIONS.filter((a) => a !== 'fail')), to: fc.nat(5) }), { maxLength: 6 }),
    failAt: fc.nat(),
    auto: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    retry: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  })
  .map(({ length, extra, failAt, auto, retry }) => {
    const chain = STATE_NAMES.slice(0, length);
    const all = [...chain, 'done', 'failed'];
    const transitions: TransitionSpec[] = chain.map((from, i) => ({ from, action: `step_${i}`, to: chain[i + 1] ?? 'done' }));
    for (const t of extra) transitions.push({ from: chain[t.from % chain.length], action: t.action, to: all[t.to % all.length] });
    transitions.splice(failAt % (transitions.length + 1), 0, { from: ANY_STATE, action: 'fail', to: 'failed' });
    const states: Record<string, StateSpec> = { done: { terminal: true, success: true }, failed: { terminal: true } };
    chain.forEach((name, i) => {
      const own = transitions.filter((t) => t.from === name).map((t) => t.action);
      states[name] = {
        ...(i === 0 ? { initial: true } : {}),
        ...(auto[i] ? { auto_advance: own[0] } : {}),
        ...(retry[i] ? { retry_action: own[own.length - 1] } : {}),
      };
    });
    return definitionOf(states, transitions);
  });

/** Anything goes: random flags and transitions over a few names, unknown states included. */
const arbitraryDefinition: fc.Arbitrary<WorkflowDefinition> = fc
  .record({
    states: fc.dictionary(
      fc.constantFrom(...STATE_NAMES),
      fc.record(
        {
          initial: fc.boolean(),
          terminal: fc.boolean(),
          success: fc.boolean(),
          auto_advance: fc.constantFrom(...ACTIONS),
          retry_action: fc.constantFrom(...ACTIONS),
        },
        { requiredKeys: [] },
      ),
      { minKeys: 1 },
    ),
    transitions: fc.array(
      fc.record({ from: fc.constantFrom(ANY_STATE, 'zz', ...STATE_NAMES), action: fc.constantFrom(...ACTIONS), to: fc.constantFrom('zz', ...STATE_NAMES) }),
      { maxLength: 10 },
    ),
  })
  .map(({ states, transitions }) => definitionOf(states, transitions));

/** Both: well-formed definitions with a few random transitions appended, and arbitrary ones. */
const mostlyWellFormed = fc.oneof(
  fc
    .tuple(wellFormed, fc.array(fc.record({ from: fc.constantFrom(ANY_STATE, ...STATE_NAMES), action: fc.constantFrom(...ACTIONS), to: fc.constantFrom(...STATE_NAMES, 'done', 'failed') }), { maxLength: 2 }))
    .map(([def, more]) => definitionOf(def.states, [...def.transitions, ...more])),
  arbitraryDefinition,
);

const accepts = (def: WorkflowDefinition) => {
  try {
    defineWorkflow(def);
    return true;
  } catch {
    return false;
  }
};

/** What the engine relies on when it runs an accepted definition. */
function runnableProblems(def: WorkflowDefinition): string[] {
  const problems: string[] = [];
  const names = Object.keys(def.states);
  if (names.filter((n) => def.states[n].initial).length !== 1) problems.push('not exactly one initial state');
  if (!names.some((n) => def.states[n].terminal && def.states[n].success)) problems.push('no success state');
  for (const t of def.transitions) {
    if (t.from !== ANY_STATE && !def.states[t.from]) problems.push(`${t.action} from unknown ${t.from}`);
    if (!def.states[t.to]) problems.push(`${t.action} to unknown ${t.to}`);
  }
  for (const [name, s] of Object.entries(def.states)) {
    if (s.terminal && s.auto_advance) problems.push(`terminal ${name} auto-advances`);
    for (const action of [s.auto_advance, s.retry_action]) {
      if (action && !def.states[findTransition(def, name, action)?.to ?? '']) problems.push(`${name}: ${action} leads nowhere`);
    }
    // The engine fails a run from whatever state it is in, through findTransition(state, 'fail').
    const fail = findTransition(def, name, 'fail');
    const target = fail && def.states[fail.to];
    if (!target || !target.terminal || target.success) problems.push(`${name}: fail does not end in a failed terminal state`);
  }
  return problems;
}

describe('definitions (assertWellFormed, findTransition)', () => {
  it('accepts every definition that is well formed by construction', () => {
    fc.assert(
      fc.property(wellFormed, (def) => {
        expect(() => defineWorkflow(def)).not.toThrow();
        expect(runnableProblems(def)).toEqual([]);
      }),
      runs(300),
    );
  });

  it('accepts only definitions the engine can run: one initial state, resolvable actions, fail from every state to a failed terminal state', () => {
    fc.assert(
      fc.property(mostlyWellFormed, (def) => {
        if (accepts(def)) expect(runnableProblems(def)).toEqual([]);
      }),
      runs(1000),
    );
  });

  it('rejects each single broken rule of a well-formed definition, naming it', () => {
    const breakers: Array<[string, (d: WorkflowDefinition) => WorkflowDefinition]> = [
      ['initial state', (d) => definitionOf({ ...d.states, failed: { ...d.states.failed, initial: true } }, d.transitions)],
      ['initial state', (d) => definitionOf(Object.fromEntries(Object.entries(d.states).map(([k, s]) => [k, { ...s, initial: false }])), d.transitions)],
      ['unknown to-state', (d) => definitionOf(d.states, [...d.transitions, { from: 'a', action: 'go', to: 'nowhere' }])],
      ['unknown from-state', (d) => definitionOf(d.states, [...d.transitions, { from: 'nowhere', action: 'go', to: 'a' }])],
      ['has no transition', (d) => definitionOf({ ...d.states, a: { ...d.states.a, auto_advance: 'teleport' } }, d.transitions)],
      ['has no transition', (d) => definitionOf({ ...d.states, a: { ...d.states.a, retry_action: 'teleport' } }, d.transitions)],
      ['cannot auto-advance', (d) => definitionOf({ ...d.states, done: { ...d.states.done, auto_advance: 'fail' } }, d.transitions)],
      ['fail transition', (d) => definitionOf(d.states, d.transitions.filter((t) => t.action !== 'fail'))],
      ['fail transition', (d) => definitionOf({ ...d.states, failed: { terminal: true, success: true } }, d.transitions)],
      ['no success state', (d) => definitionOf({ ...d.states, done: { terminal: true } }, d.transitions)],
    ];
    fc.assert(
      fc.property(wellFormed, fc.constantFrom(...breakers), (def, [rule, breakIt]) => {
        expect(() => defineWorkflow(breakIt(def))).toThrow(rule);
      }),
      runs(300),
    );
  });

  it('findTransition: a state-specific transition wins over one from any state; the first match counts; none when nothing matches', () => {
    fc.assert(
      fc.property(arbitraryDefinition, fc.constantFrom(...STATE_NAMES), fc.constantFrom(...ACTIONS), (def, state, action) => {
        const found = findTransition(def, state, action);
        const specific = def.transitions.find((t) => t.from === state && t.action === action);
        const fromAny = def.transitions.find((t) => t.from === ANY_STATE && t.action === action);
        expect(found).toBe(specific ?? fromAny);
        if (found) expect(found.action).toBe(action);
      }),
      runs(500),
    );
  });
});

// --- failures -------------------------------------------------------------------------------

const text = fc.string({ maxLength: 30 });
const state = fc.constantFrom(...STATE_NAMES);
const action = fc.constantFrom(...ACTIONS);

function expectFields(fields: object, state: string, action: string) {
  const f = fields as Record<string, unknown>;
  expect(Object.keys(f).sort()).toEqual(FAILURE_FIELDS);
  for (const name of FAILURE_FIELDS) expect(typeof f[name]).toBe('string');
  expect(f.failed_step).toBe(action);
  expect(f.failed_at_state).toBe(state);
  expect(f.error).toBe(f.failure_reason);
}

describe('classifyFailure', () => {
  it('a StepFailure keeps its message, type, layer and patch', () => {
    fc.assert(
      fc.property(text, text, text, fc.dictionary(text, fc.jsonValue()), state, action, (message, type, layer, patch, st, ac) => {
        const { fields, patch: kept } = classifyFailure(new StepFailure(message, type, layer, patch), st, ac);
        expectFields(fields, st, ac);
        expect(fields).toMatchObject({ failure_reason: message, failure_type: type, error_type: type, failed_layer: layer });
        expect(kept).toBe(patch);
      }),
      runs(200),
    );
  });

  it("an activity's ApplicationFailure: its type (else activity_error), its first detail as patch when an object", () => {
    fc.assert(
      fc.property(text, fc.option(text, { nil: undefined }), fc.array(fc.jsonValue(), { maxLength: 3 }), state, action, (message, type, details, st, ac) => {
        const cause = ApplicationFailure.create({ message, type, details, nonRetryable: true });
        const err = new ActivityFailure('activity failed', 'callProvider', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
        const { fields, patch } = classifyFailure(err, st, ac);
        expectFields(fields, st, ac);
        const wantType = type ?? 'activity_error';
        expect(fields).toMatchObject({ failure_reason: message, failure_type: wantType, error_type: wantType, failed_layer: 'activity' });
        const first = details[0];
        expect(patch).toEqual(first !== null && typeof first === 'object' ? first : {});
      }),
      runs(200),
    );
  });

  it('an activity time-out is failure_type timeout', () => {
    fc.assert(
      fc.property(fc.constantFrom(TimeoutType.START_TO_CLOSE, TimeoutType.HEARTBEAT, TimeoutType.SCHEDULE_TO_CLOSE), state, action, (timeoutType, st, ac) => {
        const err = new ActivityFailure('timed out', 'callProvider', '1', RetryState.TIMEOUT, 'worker', new TimeoutFailure('timeout', undefined, timeoutType));
        const { fields, patch } = classifyFailure(err, st, ac);
        expectFields(fields, st, ac);
        expect(fields).toMatchObject({ failure_type: 'timeout', failed_layer: 'activity', error_type: 'TimeoutFailure' });
        expect(patch).toEqual({});
      }),
      runs(20),
    );
  });

  it('anything else a handler throws becomes an internal_error of the engine layer, never an exception', () => {
    const thrown = fc.oneof(
      fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withBigInt: true, withDate: true }),
      text.map((m) => new Error(m)),
      text.map((m) => new TypeError(m)),
    );
    fc.assert(
      fc.property(thrown, state, action, (err, st, ac) => {
        const { fields, patch } = classifyFailure(err, st, ac);
        expectFields(fields, st, ac);
        expect(fields).toMatchObject({ failure_type: 'internal_error', failed_layer: 'engine' });
        let text: string | undefined;
        try {
          text = err instanceof Error ? err.message : String(err);
        } catch {
          // a value whose conversion throws ({toString: 0}, no prototype): still a string reason
        }
        if (text !== undefined) expect(fields.failure_reason).toBe(text);
        expect(patch).toEqual({});
      }),
      runs(300),
    );
  });
});

// --- redaction --------------------------------------------------------------------------------

describe('redact', () => {
  it('replaces exactly the present, non-null secret fields, keeps everything else and never mutates its input', () => {
    const key = fc.constantFrom<string>('api_token', 'token', 'base_url', 'status_code', 'response', 'x');
    fc.assert(
      fc.property(fc.dictionary(key, fc.oneof(fc.jsonValue(), fc.constant(undefined))), fc.uniqueArray(key, { maxLength: 3 }), (data, secrets) => {
        const copy = structuredClone(data);
        const out = redact(data, secrets);
        expect(data).toEqual(copy);
        expect(Object.keys(out).sort()).toEqual(Object.keys(data).sort());
        for (const [k, v] of Object.entries(data)) {
          if (secrets.includes(k) && v !== undefined && v !== null) expect(out[k]).toBe(REDACTED);
          else expect(out[k]).toEqual(v);
        }
        expect(redact(out, secrets)).toEqual(out);
        if (!secrets.length) expect(out).toBe(data);
      }),
      runs(300),
    );
  });
});

// --- field problems (what a 422 lists) ----------------------------------------------------------

describe('fieldProblems', () => {
  const kinds = { string: z.string(), number: z.number(), boolean: z.boolean() } as const;
  type Kind = keyof typeof kinds;
  const spec = fc.dictionary(
    fc.constantFrom('alpha', 'beta', 'gamma', 'delta'),
    fc.record({ kind: fc.constantFrom<Kind>('string', 'number', 'boolean'), optional: fc.boolean() }),
    { minKeys: 1 },
  );
  const value = fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]));

  it('names every unknown, missing and mistyped field of a strict object, and nothing else', () => {
    fc.assert(
      fc.property(spec, fc.dictionary(fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'extra', 'other'), value), fc.option(fc.constantFrom('initial_data', 'secrets'), { nil: undefined }), (shape, input, prefix) => {
        const schema = z.strictObject(Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, s.optional ? kinds[s.kind].optional() : kinds[s.kind]])));
        const parsed = schema.safeParse(input);
        const at = (k: string) => (prefix ? `${prefix}.${k}` : k);
        const want: Array<[string, string]> = [];
        for (const [k, v] of Object.entries(input)) {
          if (!shape[k]) want.push([at(k), 'unknown_field']);
          else if (typeof v !== shape[k].kind) want.push([at(k), 'invalid_type']);
        }
        for (const [k, s] of Object.entries(shape)) if (!(k in input) && !s.optional) want.push([at(k), 'required']);
        if (parsed.success) {
          expect(want).toEqual([]);
          return;
        }
        const problems = fieldProblems(parsed.error, input, prefix);
        expect(problems.map((p) => [p.field, p.rule]).sort()).toEqual(want.sort());
        for (const p of problems) expect(typeof p.message === 'string' && p.message.length > 0).toBe(true);
      }),
      runs(500),
    );
  });
});

// --- Idempotency-Key body hash ----------------------------------------------------------------

/** The same JSON value with every object's keys in another order. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffled(v, seed + i));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const rotated = entries.map((_, i) => entries[(i + seed) % entries.length]).reverse();
    return Object.fromEntries(rotated.map(([k, v]) => [k, shuffled(v, seed + 1)]));
  }
  return value;
}

/** JSON equality where key order does not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return sameJson(ka, kb) && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return Object.is(a, b) || (a === 0 && b === 0);
}

describe('requestHash (Idempotency-Key comparison)', () => {
  const body = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

  it('ignores key order, at any depth, and survives a JSON round trip', () => {
    fc.assert(
      fc.property(body, fc.nat(10), (value, seed) => {
        expect(requestHash(shuffled(value, seed))).toBe(requestHash(value));
        expect(requestHash(JSON.parse(JSON.stringify(value)))).toBe(requestHash(value));
      }),
      runs(300),
    );
  });

  it('equal hashes exactly for equal JSON bodies', () => {
    // Pairs that are often close: a value and a small edit of it, or two unrelated values.
    const pair = fc.oneof(
      fc.tuple(body, body),
      body.chain((v) => fc.tuple(fc.constant(v), fc.jsonValue({ maxDepth: 1 }).map((w) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, k: w } : [v, w])))),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const normalized = JSON.parse(JSON.stringify(b)) as unknown;
        expect(requestHash(a) === requestHash(normalized)).toBe(sameJson(a, normalized));
      }),
      runs(500),
    );
  });
});
