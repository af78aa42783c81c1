import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { z } from 'zod';
import { MEMO_END_USER, MEMO_SCHEDULE_ID, MEMO_WORKFLOW_TYPE, ORGANIZATION_PREFIX, SA_ORGANIZATION, SA_STATE, SA_WORKFLOW_TYPE } from '../constants';
import { CANCELLED, type EngineWorkflowInput, type FailedRunDetails, type ResumePoint, type RunOwner, type TerminalStatus } from './contract';
import { findTransition, initialState, type RunData, type StepContext, type WorkflowDefinition } from './definition';
import { classifyFailure, type ClassifiedFailure, projectionRejection, StepFailure } from './failure';
import { fieldProblems } from './field-problems';
import { findNul, findUnstorableText, NUL_MESSAGE } from './storable-text';
import { ORGANIZATION_MISMATCH, organizationRefusal } from './organization-binding';
import { redact } from './redact';
import { projection, writeAhead } from './write-ahead';

const PATCH_STATE_ATTRIBUTE_ON_CHANGE = 'engine-state-attribute-on-change';
const PATCH_WELL_FORMED_INPUT = 'engine-well-formed-input';
const PATCH_ORGANIZATION_BINDING = 'engine-organization-binding';
const PATCH_CANCEL_AS_FAILURE = 'engine-cancel-as-failure';
const PATCH_WRITE_AHEAD = 'engine-write-ahead';
const PATCH_INVALID_INPUT_KEPT_SAFE = 'engine-invalid-input-kept-safe';

/** Past this many history events a waiting run continues as new, keeping histories bounded. */
const CONTINUE_AS_NEW_AFTER_EVENTS = 2_000;

export type EngineWorkflow = (input: EngineWorkflowInput) => Promise<RunData>;

/** The Temporal workflow function for one definition; its Temporal type name is the workflow_type. */
export function makeWorkflow(def: WorkflowDefinition): EngineWorkflow {
  const workflow: EngineWorkflow = (input) => runDefinition(def, input);
  Object.defineProperty(workflow, 'name', { value: def.workflow_type });
  return workflow;
}

/**
 * Runs one execution of a definition. For a workflow whose definition is built per run (a
 * composition's Dag from the plan in its input) under one registered Temporal type.
 */
export function runDefinition(def: WorkflowDefinition, input: EngineWorkflowInput): Promise<RunData> {
  return new Machine(def, input).run();
}

type Next = { action: string; delay_seconds: number } | undefined;

/** Where a run goes back to if the database refuses the transition it deferred (write-ahead.ts). */
interface Deferred {
  action: string;
  before: { state: string; data: RunData; seq: number };
}

class Machine {
  private readonly workflowId = workflowInfo().workflowId;
  private readonly chain = workflowInfo().firstExecutionRunId;
  private readonly org: string;
  private state: string;
  private data: RunData;
  private seq: number;
  private attempt: number;
  private readonly carry: RunData;
  private cancelled = false;
  /** Transitions into a step are written by the step's activity (write-ahead.ts); executions recorded before wrote each one itself. */
  private writesAhead = false;
  private deferred?: Deferred;

  constructor(
    private readonly def: WorkflowDefinition,
    private readonly input: EngineWorkflowInput,
  ) {
    this.org = input.organization_uuid;
    const resume = input.resume;
    this.state = resume?.state ?? initialState(def);
    this.data = resume?.data ?? { ...input.initial_data };
    this.seq = resume?.seq ?? 0;
    this.attempt = resume?.attempt ?? 1;
    this.carry = { ...resume?.carry };
  }

  async run(): Promise<RunData> {
    // Before anything is tagged, projected or called: a run may act only for the organization
    // its input was encrypted for. Executions recorded before this check replay without it.
    if (patched(PATCH_ORGANIZATION_BINDING)) {
      const refusal = organizationRefusal(this.input);
      if (refusal) throw ApplicationFailure.nonRetryable(refusal, ORGANIZATION_MISMATCH);
    }
    this.writesAhead = writeAhead.available && patched(PATCH_WRITE_AHEAD);
    const resume = this.input.resume;
    this.tagExecution();
    writeAhead.attributeIs(this.state);
    if (resume?.reason !== 'continue') {
      const memo = workflowInfo().memo;
      const started = { ...this.identity(), state_name: this.state, at: nowIso(), schedule_id: scheduleIdOf(memo), owner: ownerOf(memo) };
      if (this.writesAhead) writeAhead.deferStart(started);
      else await CancellationScope.nonCancellable(() => projection.projectRunStarted(started));
    }
    if (!resume) {
      const invalid = this.validateInput();
      if (invalid) {
        // Executions recorded before this carried the whole input into their output, unknown fields included.
        if (patched(PATCH_INVALID_INPUT_KEPT_SAFE)) this.data = this.safeInput();
        return this.fail(invalid, 'validate', false);
      }
    }
    let next: Next = resume?.next ?? this.autoAdvance(this.state);
    try {
      while (!this.def.states[this.state].terminal) {
        if (!next) {
          const problem = new StepFailure(`state ${this.state} has nothing scheduled`, 'definition_error', 'engine');
          return this.fail(classifyFailure(problem, this.state, 'schedule'), 'schedule', false);
        }
        if (next.delay_seconds > 0) {
          await this.settle();
          await this.continueAsNewIfLong(next);
          await sleep(next.delay_seconds * 1000);
        }
        next = await this.take(next.action);
      }
      return this.output(this.data);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return this.failCancelled(err, next);
    }
  }

  /**
   * A cancel request ends the run through `fail` with failure_type cancelled and status CANCELLED.
   * The execution ends Failed with a checkpoint on the action that was pending, so the run can be
   * retried like any failed one; executions recorded before ended Cancelled, without a checkpoint.
   */
  private async failCancelled(cancellation: unknown, pending: Next): Promise<never> {
    this.cancelled = true;
    const failure = classifyFailure(new StepFailure('run cancelled', CANCELLED, 'engine'), this.state, 'cancel');
    if (!patched(PATCH_CANCEL_AS_FAILURE)) {
      await CancellationScope.nonCancellable(() => this.fail(failure, 'cancel', false).catch(() => undefined));
      throw cancellation;
    }
    return CancellationScope.nonCancellable(() => this.fail(failure, 'cancel', true, pending));
  }

  /**
   * Takes one transition; returns what comes after it. Its common path awaits only the handler:
   * in Temporal's workflow sandbox every promise captures a source-mapped stack trace (for the
   * stack trace query, sdk-typescript#1587), and this runs at every step of every run.
   */
  private async take(action: string): Promise<Next> {
    const transition = findTransition(this.def, this.state, action);
    if (!transition) {
      const problem = new StepFailure(`no transition ${action} from ${this.state}`, 'definition_error', 'engine');
      return this.fail(classifyFailure(problem, this.state, action), action, false);
    }
    const handler = this.def.actions[action];
    let result;
    try {
      result = (await handler?.(this.data, this.context(action))) ?? {};
    } catch (err) {
      if (isCancellation(err)) throw err;
      await this.failIfRefused();
      const failure = classifyFailure(err, this.state, action);
      return this.fail(failure, action, !failure.final);
    }
    // A handler may have caught the refusal of the transition before it.
    const refusal = this.failIfRefused();
    if (refusal) await refusal;
    const before = { state: this.state, data: this.data, seq: this.seq };
    const patch = result.patch ?? {};
    this.data = { ...this.data, ...patch };
    try {
      const writing = this.record(action, transition.to, patch);
      if (writing) await writing;
      if (this.defers(transition.to)) this.deferred = { action, before };
    } catch (err) {
      await this.failIfRefused();
      const rejected = projectionRejection(err);
      if (!rejected) throw err;
      this.data = before.data;
      return this.fail(classifyFailure(rejected, this.state, action), action);
    }
    const target = this.def.states[transition.to];
    if (target.terminal && !target.success) this.throwFailed({ ...before, next: this.redrive(before.state, action) });
    return this.autoAdvance(this.state) ?? result.schedule;
  }

  /** How a retry re-drives a state: its auto-advance, its declared retry action, or the action that failed. */
  private redrive(state: string, failedAction: string): NonNullable<Next> {
    const spec = this.def.states[state];
    return { action: spec.auto_advance ?? spec.retry_action ?? failedAction, delay_seconds: 0 };
  }

  private async fail(failure: ClassifiedFailure, action: string, resumable = true, pending?: Next): Promise<never> {
    await this.settle();
    const before = { state: this.state, data: this.data, next: pending ?? this.redrive(this.state, action) };
    const stamp =
      this.def.failure_stamp === 'failed_at' ? { failed_at: nowIso() } : { failed_action: action };
    const outputs = this.def.failure_outputs?.(this.data, this.context('fail'));
    const patch = { ...outputs, ...failure.patch, ...this.failureFields(failure), ...stamp };
    this.data = { ...this.data, ...patch };
    const failTo = findTransition(this.def, this.state, 'fail')!.to;
    try {
      await this.record('fail', failTo, patch);
    } catch (err) {
      const rejection = projectionRejection(err);
      if (!rejection) throw err;
      // What the failure carried (a provider's answer, say) is what the database refused: the run
      // still ends FAILED in the projection, with the engine's own failure fields as its data.
      const rejected = { ...this.failureFields(classifyFailure(rejection, this.state, action)), ...stamp };
      this.data = { ...before.data, ...rejected };
      await this.record('fail', failTo, rejected, rejected);
    }
    this.throwFailed(resumable ? before : undefined);
  }

  private failureFields(failure: ClassifiedFailure): RunData {
    const layerOf = this.def.failed_layer_of;
    return { ...failure.fields, ...(layerOf ? { failed_layer: layerOf(failure.fields) } : {}) };
  }

  /** Ends the Temporal execution as Failed, carrying where a retry would pick the run up. */
  private throwFailed(resumeFrom: { state: string; data: RunData; next: NonNullable<Next> } | undefined): never {
    const output = this.output(this.data);
    const details: FailedRunDetails = {
      checkpoint: resumeFrom && { ...resumeFrom, seq: this.seq, attempt: this.attempt, ...this.carried() },
      output,
    };
    throw ApplicationFailure.create({
      message: String(this.data.failure_reason ?? `run ended in ${this.state}`),
      type: String(this.data.failure_type ?? 'failed'),
      nonRetryable: true,
      details: [details],
    });
  }

  /** What a run shows of its data once it ended: secrets redacted, unechoed inputs left out. */
  private output(data: RunData): RunData {
    const unechoed = this.def.unechoed_fields ?? [];
    const shown = unechoed.length ? Object.fromEntries(Object.entries(data).filter(([field]) => !unechoed.includes(field))) : data;
    return redact(shown, this.def.secret_fields);
  }

  /** Only when a handler kept something: checkpoints of types that never do stay as they were. */
  private carried(): Pick<ResumePoint, 'carry'> {
    return Object.keys(this.carry).length ? { carry: this.carry } : {};
  }

  /**
   * Projects one transition; a write the database refuses leaves the run where it was, seq
   * included. Returns the write to await, if one was made now: a deferred one (`defers`) is not.
   */
  private record(action: string, to: string, patch: RunData, stateData: RunData = this.data): Promise<void> | undefined {
    const target = this.def.states[to];
    const seq = this.seq + 1;
    const event = {
      ...this.identity(),
      seq,
      from: this.state,
      to,
      action,
      at: nowIso(),
      data: redact(patch, this.def.secret_fields),
      terminal: target.terminal
        ? { status: this.terminalStatus(target.success), state_data: this.output(stateData) }
        : undefined,
    };
    const recorded = () => {
      this.seq = seq;
      const changed = to !== this.state;
      this.state = to;
      // A transition back into the same state (a poll) leaves the attribute as it is, instead of an
      // event per poll; executions recorded before this upserted on every transition.
      if (!this.writesAhead && (changed || !patched(PATCH_STATE_ATTRIBUTE_ON_CHANGE))) upsertSearchAttributes([{ key: SA_STATE, value: to }]);
    };
    let writing: Promise<void> | undefined;
    if (this.defers(to)) writing = writeAhead.defer(event);
    else if (this.writesAhead) writing = writeAhead.write(event);
    // A cancel request must not interrupt a write: the run would lose track of the seq it stored.
    else writing = CancellationScope.nonCancellable(() => projection.projectTransition(event));
    if (writing) return writing.then(recorded);
    recorded();
    return undefined;
  }

  /**
   * Whether a transition into `to` is left for the next step's activity to write: the database
   * may still refuse it then, and failIfRefused takes the run back to before it.
   */
  private defers(to: string): boolean {
    return this.writesAhead && !this.def.states[to].terminal;
  }

  /** Writes the deferred transition before the run waits or ends; a refusal fails the run before it. */
  private async settle(): Promise<void> {
    if (!this.writesAhead) return;
    try {
      await writeAhead.write();
    } catch (err) {
      await this.failIfRefused();
      throw err;
    }
  }

  /**
   * If the database refused the deferred transition: the run goes back to before it and fails
   * there. Otherwise nothing to await (see take).
   */
  private failIfRefused(): Promise<never> | undefined {
    const refused = writeAhead.refused;
    const deferred = this.deferred;
    if (!refused || !deferred) return undefined;
    this.state = deferred.before.state;
    this.data = deferred.before.data;
    this.seq = deferred.before.seq;
    this.deferred = undefined;
    writeAhead.clearRefusal();
    return this.fail(classifyFailure(refused.failure, this.state, deferred.action), deferred.action);
  }

  private terminalStatus(success: boolean | undefined): TerminalStatus {
    if (success) return 'COMPLETED';
    return this.cancelled ? 'CANCELLED' : 'FAILED';
  }

  private validateInput(): ClassifiedFailure | undefined {
    if (typeof this.org !== 'string' || !this.org.startsWith(ORGANIZATION_PREFIX) || findNul(this.org) !== undefined) {
      const problem = new StepFailure('organization_uuid must be an org_ id', 'invalid_input', 'validation');
      return classifyFailure(problem, this.state, 'validate');
    }
    const nulAt = findNul(this.input.initial_data, ['initial_data']);
    if (nulAt !== undefined) {
      return classifyFailure(new StepFailure(`${nulAt}: ${NUL_MESSAGE}`, 'invalid_input', 'validation'), this.state, 'validate');
    }
    // Asked only when the input is ill-formed, so that runs recorded before the check replay as they ran.
    const unstorable =
      findUnstorableText(this.org, ['organization_uuid']) ?? findUnstorableText(this.input.initial_data, ['initial_data']);
    if (unstorable && patched(PATCH_WELL_FORMED_INPUT)) {
      const problem = new StepFailure(`${unstorable.field}: ${unstorable.message}`, 'invalid_input', 'validation');
      return classifyFailure(problem, this.state, 'validate');
    }
    let parsed;
    try {
      parsed = this.def.input.safeParse(this.input.initial_data);
      // Asked only when the input is refused, so that runs recorded before replay as they ran.
      const before = this.def.input_before;
      if (!parsed.success && before && !patched(before.patch)) parsed = before.schema.safeParse(this.input.initial_data);
    } catch (err) {
      // A schema that throws would otherwise fail the workflow task forever: fail the run instead.
      const problem = new StepFailure(`input validation failed: ${(err as Error).message}`, 'invalid_input', 'validation');
      return classifyFailure(problem, this.state, 'validate');
    }
    if (parsed.success) {
      this.data = parsed.data as RunData;
      return undefined;
    }
    const reason = fieldProblems(parsed.error, this.input.initial_data, 'initial_data')
      .map((p) => `${p.field}: ${p.message}`)
      .join('; ');
    return classifyFailure(new StepFailure(reason, 'invalid_input', 'validation'), this.state, 'validate');
  }

  /**
   * What a run whose input was refused keeps of it for its output: the fields its schema declares,
   * each with a value that field's schema accepts and Postgres can store. An unknown field may be a
   * secret no secret_fields entry names, and a value of the wrong type would break the type's output
   * schema (a secret field's included: it was never the secret the caller meant to send).
   */
  private safeInput(): RunData {
    const initial: unknown = this.input.initial_data;
    const shape = this.def.input instanceof z.ZodObject ? (this.def.input.shape as Record<string, z.ZodType>) : {};
    if (initial === null || typeof initial !== 'object' || Array.isArray(initial)) return {};
    const kept: RunData = {};
    for (const [field, value] of Object.entries(initial)) {
      if (!Object.hasOwn(shape, field) || findUnstorableText(value) !== undefined) continue;
      try {
        const parsed = shape[field].safeParse(value);
        if (parsed.success) kept[field] = parsed.data;
      } catch {
        // A field schema that throws keeps nothing of its field (see validateInput).
      }
    }
    return kept;
  }

  private autoAdvance(state: string): Next {
    const action = this.def.states[state].auto_advance;
    return action ? { action, delay_seconds: 0 } : undefined;
  }

  private async continueAsNewIfLong(next: NonNullable<Next>): Promise<void> {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < CONTINUE_AS_NEW_AFTER_EVENTS) return;
    const resume: ResumePoint = {
      reason: 'continue',
      state: this.state,
      data: this.data,
      seq: this.seq,
      attempt: this.attempt,
      next,
      ...this.carried(),
    };
    // The registered Temporal type, which a definition built per run (runDefinition) does not name.
    const continueAsNew = makeContinueAsNewFunc<(input: EngineWorkflowInput) => Promise<RunData>>({
      workflowType: info.workflowType,
    });
    await continueAsNew({ organization_uuid: this.org, initial_data: {}, resume });
  }

  /** Runs started with the Temporal client directly may lack these; the API sets them at start. */
  private tagExecution(): void {
    const info = workflowInfo();
    const attrs = info.typedSearchAttributes;
    const wanted = [
      { key: SA_ORGANIZATION, value: this.org },
      { key: SA_WORKFLOW_TYPE, value: this.def.workflow_type },
      { key: SA_STATE, value: this.state },
    ];
    const missing = wanted.filter(({ key, value }) => attrs.get(key) !== value);
    if (missing.length) upsertSearchAttributes(missing);
    if (info.memo?.[MEMO_WORKFLOW_TYPE] !== this.def.workflow_type) upsertMemo({ [MEMO_WORKFLOW_TYPE]: this.def.workflow_type });
  }

  /** Every projection write names its execution chain: the projection refuses to merge another chain's run into this one's. */
  private identity() {
    return {
      workflow_id: this.workflowId,
      organization_uuid: this.org,
      workflow_type: this.def.workflow_type,
      version: this.def.version,
      attempt: this.attempt,
      first_execution_run_id: this.chain,
    };
  }

  private context(action: string): StepContext {
    return {
      workflow_id: this.workflowId,
      organization_uuid: this.org,
      workflow_type: this.def.workflow_type,
      state: this.state,
      action,
      attempt: this.attempt,
      now: () => new Date(),
      carry: this.carry,
    };
  }
}

function scheduleIdOf(memo: Record<string, unknown> | undefined): string | undefined {
  const id = memo?.[MEMO_SCHEDULE_ID];
  return typeof id === 'string' ? id : undefined;
}

function ownerOf(memo: Record<string, unknown> | undefined): RunOwner | undefined {
  const owner = memo?.[MEMO_END_USER] as Partial<RunOwner> | undefined;
  if (typeof owner?.end_user_uuid !== 'string' || typeof owner.client_uuid !== 'string') return undefined;
  return { end_user_uuid: owner.end_user_uuid, client_uuid: owner.client_uuid };
}

function nowIso(): string {
  return new Date().toISOString();
}
