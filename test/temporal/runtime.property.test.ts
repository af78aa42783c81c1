import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import fc from 'fast-check';
import type { FailedRunDetails, ProjectionActivities, RunStartedEvent, TransitionEvent } from '../../workflows/runtime/contract';
import { REDACTED } from '../../workflows/runtime/definition';
import { testDataConverter, timeSkippingEnv } from '../support/temporal-test-env';
import { type GeneratedActivities, type GeneratedInput, type MachineSpec, type StepSpec, stateName } from './fixtures/generated';

/**
 * Property-based tests of the state-machine runtime: random Linear machines (random length,
 * auto-advanced or timer-scheduled steps with random delays, random failing steps of every
 * kind, a secret some steps rotate) run by the real engine on Temporal's time-skipping test
 * server. `make test` runs FC_RUNS (default 40) machines; `make fuzz` 400.
 */
const RUNS = Number(process.env.FC_RUNS || 40);
const TASK_QUEUE = 'runtime-property';
const FAILURE_FIELDS = ['failure_reason', 'failure_type', 'failed_step', 'failed_layer', 'failed_at_state', 'error', 'error_type', 'failed_action'];

const word = fc.stringMatching(/^[a-z][a-z_]{0,11}$/);
const outcome = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('patch' as const), rotate_secret: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('activity_patch' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('step_failure' as const), failure_type: word, layer: word, message: fc.string({ minLength: 1, maxLength: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throw' as const), message: fc.string({ minLength: 1, maxLength: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('activity_failure' as const), failure_type: word, message: fc.string({ minLength: 1, maxLength: 40 }) }) },
);
const entry = fc.oneof(
  fc.constant({ auto: true as const }),
  fc.record({ auto: fc.constant(false as const), delay_seconds: fc.integer({ min: 1, max: 7 * 24 * 3600 }) }),
);
const step: fc.Arbitrary<StepSpec> = fc.record({ entry, outcome });
const machine: fc.Arbitrary<MachineSpec> = fc
  .array(step, { minLength: 1, maxLength: 8 })
  // The initial state is left by its auto-advance: nothing else could schedule the first step.
  .map((steps) => ({ steps: steps.map((s, i) => (i === 0 ? { ...s, entry: { auto: true as const } } : s)) }));
const scenario = fc.record({
  machine,
  secret: fc.stringMatching(/^[0-9a-f]{16,32}$/).map((h) => `sekret-${h}`),
  invalidInput: fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))), // ~25 %
});

/** What the engine must have done for a machine: the steps taken, and the failure if one. */
function expectedRun(spec: MachineSpec, invalidInput: boolean) {
  if (invalidInput) {
    return { taken: 0, failing: { action: 'validate', state: 'pending', type: 'invalid_input', errorType: 'invalid_input', layer: 'validation', message: undefined, patchKey: undefined } };
  }
  const n = spec.steps.length;
  const f = spec.steps.findIndex((s) => ['step_failure', 'throw', 'activity_failure'].includes(s.outcome.kind));
  if (f < 0) return { taken: n, failing: undefined };
  const o = spec.steps[f].outcome;
  const type = o.kind === 'step_failure' ? o.failure_type : o.kind === 'activity_failure' ? o.failure_type : 'internal_error';
  const layer = o.kind === 'step_failure' ? o.layer : o.kind === 'activity_failure' ? 'activity' : 'engine';
  const errorType = o.kind === 'throw' ? 'Error' : type;
  // What a failing step learned before failing is kept: a StepFailure's patch, an activity failure's first detail.
  const patchKey = o.kind === 'step_failure' ? `partial_${f}` : o.kind === 'activity_failure' ? `provider_${f}` : undefined;
  const message = 'message' in o ? o.message : undefined;
  return { taken: f, failing: { action: `step_${f}`, state: stateName(f, n), type, errorType, layer, message, patchKey } };
}

describe('state-machine runtime: properties of generated Linear machines', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const started: RunStartedEvent[] = [];
  const recorded: TransitionEvent[] = [];
  let counter = 0;

  const activities: ProjectionActivities & GeneratedActivities = {
    async projectRunStarted(e) {
      started.push(e);
    },
    async projectTransition(e) {
      recorded.push(e);
    },
    async echo({ step }) {
      return { echoed: step };
    },
    async boom({ step, failure_type, message }) {
      throw ApplicationFailure.nonRetryable(message, failure_type, { [`provider_${step}`]: 'answered' });
    },
  };

  beforeAll(async () => {
    env = await timeSkippingEnv();
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: TASK_QUEUE,
      workflowsPath: require.resolve('./fixtures/generated'),
      activities,
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  it(`${RUNS} random machines: contiguous seq, one terminal transition, failure fields iff failed, timers honoured, no secret recorded`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ machine: spec, secret, invalidInput }) => {
        const workflowId = `wf_prop_${(counter += 1)}`;
        const initial_data: Record<string, unknown> = { api_token: secret, tag: 'prop', ...(invalidInput ? { unexpected: true } : {}) };
        const input: GeneratedInput = { organization_uuid: 'org_prop', initial_data, machine: spec };
        const before = await env.currentTimeMs();
        const outcome = await env.client.workflow
          .execute('test.generated', { taskQueue: TASK_QUEUE, workflowId, args: [input] })
          .then((result) => ({ result, error: undefined }), (error: unknown) => ({ result: undefined, error }));
        const elapsedMs = (await env.currentTimeMs()) - before;
        const want = expectedRun(spec, invalidInput);
        const n = spec.steps.length;
        const events = recorded.filter((e) => e.workflow_id === workflowId);

        // Registered once, at attempt 1, in the initial state.
        expect(started.filter((e) => e.workflow_id === workflowId)).toEqual([expect.objectContaining({ state_name: 'pending', attempt: 1 })]);
        // seq contiguous from 1; each transition leaves the state the previous one entered.
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        events.forEach((e, i) => expect(e.from).toBe(i === 0 ? 'pending' : events[i - 1].to));
        expect(events.every((e) => e.attempt === 1)).toBe(true);
        // The steps taken, then `fail` if a step failed.
        const actions = Array.from({ length: want.taken }, (_, i) => `step_${i}`);
        expect(events.map((e) => e.action)).toEqual(want.failing ? [...actions, 'fail'] : actions);
        // Exactly one terminal transition, the last.
        expect(events.filter((e) => e.terminal).length).toBe(1);
        const last = events[events.length - 1];
        expect(last.terminal!.status).toBe(want.failing ? 'FAILED' : 'COMPLETED');
        expect(last.to).toBe(want.failing ? 'failed' : stateName(n, n));

        // Timers: at least every delay before the last step taken (the time-skipping server skips them).
        const delays = spec.steps.slice(1, want.failing ? want.taken + 1 : n).reduce((sum, s) => sum + (s.entry.auto ? 0 : s.entry.delay_seconds), 0);
        expect(elapsedMs).toBeGreaterThanOrEqual(delays * 1000);

        // The run's output: the completed result, or the details of the non-retryable failure.
        let output: Record<string, unknown>;
        if (want.failing) {
          expect(outcome.error).toBeInstanceOf(WorkflowFailedError);
          const cause = (outcome.error as WorkflowFailedError).cause as ApplicationFailure;
          expect(cause).toBeInstanceOf(ApplicationFailure);
          expect(cause.nonRetryable).toBe(true);
          expect(cause.type).toBe(want.failing.type);
          expect(JSON.stringify(cause.message)).not.toContain(secret);
          const details = cause.details?.[0] as FailedRunDetails;
          output = details.output;
          // A checkpoint to re-drive (the state before the failing step; seq of the fail transition, so a
          // retry's history continues after it), except after invalid input.
          if (invalidInput) expect(details.checkpoint).toBeUndefined();
          else expect(details.checkpoint).toMatchObject({ state: want.failing.state, seq: last.seq, attempt: 1, next: { action: want.failing.action, delay_seconds: 0 } });
          expect(output).toMatchObject({
            failed_step: want.failing.action,
            failed_at_state: want.failing.state,
            failure_type: want.failing.type,
            error_type: want.failing.errorType,
            failed_layer: want.failing.layer,
            failed_action: want.failing.action,
          });
          if (want.failing.message !== undefined) expect([output.failure_reason, output.error]).toEqual([want.failing.message, want.failing.message]);
          if (want.failing.patchKey) expect(output).toHaveProperty(want.failing.patchKey);
        } else {
          expect(outcome.error).toBeUndefined();
          output = outcome.result as Record<string, unknown>;
        }
        // Failure fields present (all strings) iff the run failed, in the output and in the projected state.
        for (const data of [output, last.terminal!.state_data]) {
          for (const field of FAILURE_FIELDS) {
            if (want.failing) expect(typeof data[field]).toBe('string');
            else expect(data).not.toHaveProperty(field);
          }
          expect(data.api_token).toBe(REDACTED);
        }
        // Every step's patch is recorded with its transition.
        for (let i = 0; i < want.taken; i += 1) expect(events[i].data).toHaveProperty(`out_${i}`, i);

        // The secret (and its rotated forms) never reaches anything recorded or returned.
        const seen = JSON.stringify([events, started.filter((e) => e.workflow_id === workflowId), output]);
        expect(seen).not.toContain(secret);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
