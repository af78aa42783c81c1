import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  patched,
  proxyLocalActivities,
  sleep,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { z } from 'zod';
import { MEMO_WORKFLOW_TYPE, SA_ORGANIZATION, SA_WORKFLOW_TYPE } from '../constants';
import type { DagChildActivities, EngineWorkflowInput, FailedRunDetails, ResumePoint } from './contract';
import {
  childWorkflowId,
  compensationWorkflowId,
  type DagLayer,
  type DagPlan,
  dagPlanSchema,
  mappedInputs,
  ROUTE,
  routeOf,
  runningState,
} from './dag-plan';
import {
  ANY_STATE,
  type ActionHandler,
  defineWorkflow,
  failureFields,
  type RunData,
  type StateSpec,
  type StepContext,
  type TransitionSpec,
  type WorkflowDefinition,
} from './definition';
import { StepFailure } from './failure';
import { ORGANIZATION_MISMATCH } from './organization-binding';

/**
 * The Dag kind: a parent run whose layers each run one child workflow, an ordinary engine run
 * of its own type, in plan order. A Dag is an ordinary definition run by the Machine, so
 * projection, failure classification, redaction, cancel, retry and continue-as-new are shared.
 *
 * States: pending → validated → running_<step> (one per layer, the child running) → completed,
 * or failed from any of them; a dry run goes validated → completed with status `planned`.
 * Retrying a failed parent resumes the failed layer: completed layers keep their outputs, and
 * the failed child is retried through the engine's own retry (same child id, attempt + 1, from
 * the checkpoint its failure carried). A parent whose completed layers were compensated, or
 * whose child left no checkpoint (invalid input, terminated), cannot be retried.
 */

/**
 * A run failed by the engine rather than by a layer (invalid input, preflight, a cancel) carries
 * the Dag outputs too; executions recorded before ended with the failure fields only.
 */
const PATCH_FAILURE_OUTPUTS = 'dag-failure-outputs';

/**
 * A layer's child found under its id when the parent starts it (retried or started outside the
 * parent) is adopted instead of failing the layer for good or running its provider calls again;
 * executions recorded before started it regardless.
 */
const PATCH_ADOPT_CHILD = 'dag-adopt-child';

/** How often a parent looks again at a child it adopted while that child runs. */
const ADOPTED_POLL = { firstMs: 1_000, maxMs: 30_000 };

const { projectedRun } = proxyLocalActivities<DagChildActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

export const CHILD_RETRY =
  'resume: a retry of the parent re-drives the failed layer; its child is retried under the same workflow id with attempt + 1, from the checkpoint its failure carried; completed layers are not run again';

const LAYER_STATUSES = ['planned', 'pending', 'running', 'succeeded', 'failed', 'skipped'] as const;
type LayerStatus = (typeof LAYER_STATUSES)[number];

export const dagSummaryEntry = z.object({
  layer: z.string(),
  step: z.string(),
  workflow_type: z.string().nullable().describe('null for a route layer not yet routed or skipped'),
  child_workflow_id: z.string().nullable().describe('The child run: GET /api/workflows/{child_workflow_id}'),
  status: z.enum(LAYER_STATUSES),
  attempt: z.int().nullable(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  duration_ms: z.int().nullable(),
});
type SummaryEntry = z.output<typeof dagSummaryEntry>;

export const dagFailedLayer = z.object({
  layer: z.string(),
  index: z.int().describe('0-based position of the layer in the plan'),
  child_workflow_id: z.string().nullable(),
  error: z.string(),
});

const compensationResult = z.object({
  layer: z.string(),
  step: z.string(),
  workflow_type: z.string(),
  child_workflow_id: z.string(),
  status: z.enum(['succeeded', 'failed']),
  error: z.string().nullable(),
});

/** The outputs every Dag type carries; a type spreads them into its output schema (see dagOutput). */
export const dagOutputFields = {
  workflow_run_uuid: z.string().optional().describe('This run’s workflow id'),
  status: z.enum(['succeeded', 'failed', 'planned']).optional(),
  summary: z.array(dagSummaryEntry).optional().describe('One entry per layer, in plan order'),
  completed_at: z.string().nullable().optional(),
  compensation_trigger: z
    .object({ layer: z.string(), step: z.string(), failure_type: z.string() })
    .nullable()
    .optional()
    .describe('The failed layer that ran the compensations; null when none ran'),
  compensation_results: z.array(compensationResult).nullable().optional().describe('Compensations run, last completed layer first'),
  ...failureFields,
  failed_layer: z
    .union([dagFailedLayer, z.string()])
    .optional()
    .describe('The failed layer as JSON; a string (engine, validation) when the engine itself failed the run'),
  failed_at: z.string().optional(),
};

/** A Dag type's output schema: the common Dag fields, one field per step (that child's state_data), and the type's own. */
export function dagOutput<S extends z.ZodRawShape>(plan: DagPlan, own: S) {
  const steps = Object.fromEntries(
    plan.layers.map((l) => [l.step, z.record(z.string(), z.unknown()).nullable().optional().describe(`${l.layer}: the state_data of child ${l.workflow_type}`)]),
  );
  return z.object({ ...dagOutputFields, ...steps, ...own });
}

export interface DagSpec<I extends z.ZodType, O extends z.ZodType> {
  workflow_type: string;
  version: string;
  description: string;
  input: I;
  /** See WorkflowDefinition.input_before. */
  input_before?: WorkflowDefinition['input_before'];
  output: O;
  plan: DagPlan;
  exposed_to_end_users: boolean;
  secret_fields?: string[];
  unechoed_fields?: string[];
  outbound_url_fields?: string[];
  organization_field?: string;
  idempotency_key_field?: string;
  /** Checks made before any layer starts, and all a dry run does; its patch lands in the run's data (warnings, say). */
  preflight?: ActionHandler;
  /** A boolean input: when true the run checks (preflight), returns status `planned` and starts no child. */
  dry_run_field?: string;
  /** The type's own outputs, derived from the steps' outputs, when the run succeeds, fails at a layer or is planned. */
  outputs?: (data: RunData) => RunData;
  /** Finds a routed type's definition, so an earlier step's outputs map onto its input fields by name. */
  resolveDefinition?: (workflowType: string) => WorkflowDefinition | undefined;
}

export function defineDag<I extends z.ZodType, O extends z.ZodType>(spec: DagSpec<I, O>): WorkflowDefinition<I, O> {
  const checked = dagPlanSchema.safeParse(spec.plan);
  if (!checked.success) {
    const problems = checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`workflow definition ${spec.workflow_type}: plan ${problems}`);
  }
  const layers = spec.plan.layers;
  const states: Record<string, StateSpec> = {
    pending: { initial: true, auto_advance: 'validate' },
    validated: {},
    completed: { terminal: true, success: true },
    failed: { terminal: true },
  };
  const transitions: TransitionSpec[] = [
    { from: 'pending', action: 'validate', to: 'validated' },
    { from: 'validated', action: 'plan', to: 'completed' },
    { from: 'validated', action: 'start', to: runningState(layers[0].step) },
  ];
  const actions: Record<string, ActionHandler> = {
    validate: async (data, ctx) => {
      // A run started with the Temporal client directly skips the API's check of the same rule.
      const orgField = spec.organization_field;
      if (orgField && data[orgField] !== ctx.organization_uuid) {
        throw new StepFailure(`${orgField} must be the organization the run belongs to`, ORGANIZATION_MISMATCH, 'validation');
      }
      const checked = (await spec.preflight?.(data, ctx)) ?? {};
      const dry = spec.dry_run_field !== undefined && data[spec.dry_run_field] === true;
      return { patch: { workflow_run_uuid: ctx.workflow_id, ...checked.patch }, schedule: { action: dry ? 'plan' : 'start', delay_seconds: 0 } };
    },
    plan: async (data, ctx) => ({
      patch: {
        ...finalFields('planned', ctx),
        summary: layers.map((l) => entry(l, null, 'planned')),
        ...Object.fromEntries(layers.map((l) => [l.step, null])),
        ...spec.outputs?.(data),
      },
    }),
    start: async (_data, ctx) => ({
      patch: {
        summary: layers.map((l, i) =>
          i === 0 ? { ...entry(l, childWorkflowId(ctx.workflow_id, l.step), 'running'), started_at: iso(ctx) } : entry(l, null, 'pending'),
        ),
      },
    }),
  };
  layers.forEach((layer, index) => {
    const running = runningState(layer.step);
    const next = layers[index + 1];
    states[running] = { auto_advance: finishAction(layer) };
    transitions.push({ from: running, action: finishAction(layer), to: next ? runningState(next.step) : 'completed' });
    actions[finishAction(layer)] = (data, ctx) => runLayer(spec, index, data, ctx);
  });
  transitions.push({ from: ANY_STATE, action: 'fail', to: 'failed' });
  return defineWorkflow({
    workflow_type: spec.workflow_type,
    version: spec.version,
    kind: 'Dag',
    description: spec.description,
    input: spec.input,
    input_before: spec.input_before,
    output: spec.output,
    states,
    transitions,
    exposed_to_end_users: spec.exposed_to_end_users,
    prerequisites: [],
    secret_fields: spec.secret_fields ?? [],
    unechoed_fields: spec.unechoed_fields,
    outbound_url_fields: spec.outbound_url_fields ?? [],
    organization_field: spec.organization_field,
    idempotency_key_field: spec.idempotency_key_field,
    failure_stamp: 'failed_at',
    failure_outputs: (data, ctx) => (patched(PATCH_FAILURE_OUTPUTS) ? failureOutputs(spec, data, ctx) : {}),
    plan: spec.plan,
    actions,
  });
}

const finishAction = (layer: DagLayer) => `finish_${layer.step}`;

const iso = (ctx: StepContext) => ctx.now().toISOString();

function entry(layer: DagLayer, childId: string | null, status: LayerStatus): SummaryEntry {
  return {
    layer: layer.layer,
    step: layer.step,
    workflow_type: layer.workflow_type === ROUTE ? null : layer.workflow_type,
    child_workflow_id: childId,
    status,
    attempt: null,
    started_at: null,
    completed_at: null,
    duration_ms: null,
  };
}

function finalFields(status: 'succeeded' | 'planned', ctx: StepContext): RunData {
  return { status, completed_at: iso(ctx), compensation_trigger: null, compensation_results: null };
}

/**
 * The Dag outputs of a failed run: a layer still running when the run failed (a cancel reached its
 * child) is failed too, with the attempt its child's checkpoint names; layers never reached stay
 * pending. A layer's own failure (layerFailure) patches its outputs over these.
 */
function failureOutputs(spec: DagSpec<z.ZodType, z.ZodType>, data: RunData, ctx: StepContext): RunData {
  const failedAt = iso(ctx);
  const before = (data.summary as SummaryEntry[] | undefined) ?? spec.plan.layers.map((l) => entry(l, null, 'pending'));
  const summary = before.map((s): SummaryEntry => {
    if (s.status !== 'running') return s;
    const resume = ctx.carry[s.step] as ResumePoint | undefined;
    return {
      ...s,
      status: 'failed',
      attempt: s.attempt ?? resume?.attempt ?? null,
      completed_at: failedAt,
      duration_ms: s.started_at ? Date.parse(failedAt) - Date.parse(s.started_at) : null,
    };
  });
  return {
    workflow_run_uuid: ctx.workflow_id,
    status: 'failed',
    summary,
    completed_at: null,
    compensation_trigger: null,
    compensation_results: null,
    ...spec.outputs?.({ ...data, summary }),
  };
}

/** Runs one layer's child and returns the transition to the next layer (or to completed), naming the next child. */
async function runLayer(spec: DagSpec<z.ZodType, z.ZodType>, index: number, data: RunData, ctx: StepContext) {
  const layers = spec.plan.layers;
  const layer = layers[index];
  const summary = [...((data.summary as SummaryEntry[] | undefined) ?? layers.map((l) => entry(l, null, 'pending')))];
  const childId = childWorkflowId(ctx.workflow_id, layer.step);
  const target = childTarget(spec, index, data);
  const started = summary[index].started_at ?? iso(ctx);
  let output: RunData | null = null;
  let attempt: number | null = null;
  if (target) {
    const resume = ctx.carry[layer.step] as ResumePoint | undefined;
    const input = { organization_uuid: ctx.organization_uuid, initial_data: target.input };
    const child = { childId, started, attempt: resume ? resume.attempt + 1 : 1, type: target.type };
    try {
      output = patched(PATCH_ADOPT_CHILD)
        ? await startOrAdoptChild(target.type, childId, input, resume, child)
        : await runChild(target.type, childId, { ...input, resume: resume && { ...resume, reason: 'retry', attempt: child.attempt } });
    } catch (err) {
      throw await layerFailure(spec, index, err, { ...data, summary }, ctx, child);
    }
    attempt = child.attempt;
    delete ctx.carry[layer.step];
  }
  const done = iso(ctx);
  summary[index] = {
    ...summary[index],
    workflow_type: target?.type ?? null,
    child_workflow_id: target ? childId : null,
    status: target ? 'succeeded' : 'skipped',
    attempt,
    started_at: started,
    completed_at: done,
    duration_ms: Date.parse(done) - Date.parse(started),
  };
  const next = layers[index + 1];
  if (next) {
    summary[index + 1] = { ...summary[index + 1], child_workflow_id: childWorkflowId(ctx.workflow_id, next.step), status: 'running', started_at: done };
    return { patch: { [layer.step]: output, summary } };
  }
  const finished = { ...data, [layer.step]: output, summary };
  return { patch: { [layer.step]: output, summary, ...finalFields('succeeded', ctx), ...spec.outputs?.(finished) } };
}

/** The type and input of a layer's child; undefined when a route layer is skipped. */
function childTarget(spec: DagSpec<z.ZodType, z.ZodType>, index: number, data: RunData): { type: string; input: RunData } | undefined {
  const layer = spec.plan.layers[index];
  if (layer.workflow_type !== ROUTE) return { type: layer.workflow_type, input: mappedInputs(layer.inputs, data) };
  const route = routeOf(spec.plan, index, data);
  if (!route?.type) return undefined;
  const shape = spec.resolveDefinition?.(route.type)?.input;
  const earlier = (data[route.from] ?? {}) as RunData;
  const defaults =
    shape instanceof z.ZodObject ? Object.fromEntries(Object.keys(shape.shape).filter((f) => f in earlier).map((f) => [f, earlier[f]])) : {};
  return { type: route.type, input: { ...defaults, ...mappedInputs(layer.inputs, data) } };
}

/**
 * Starts a layer's child, or adopts the run already under its id: the run API refuses to retry or
 * cancel a child alone (409 child_run), but a Temporal client may have done it. A child that has
 * completed since is not run again (a resuming parent starts it only over a failed execution):
 * its result is its projected state_data, redacted as a child's result is. One still running is
 * waited for, then taken or started again. A resumed child continues after the last attempt and
 * seq its run recorded, so no transition of its history is numbered twice. `child.attempt` follows.
 */
async function startOrAdoptChild(
  type: string,
  workflowId: string,
  input: Omit<EngineWorkflowInput, 'resume'>,
  checkpoint: ResumePoint | undefined,
  child: { attempt: number },
): Promise<RunData> {
  const read = () => projectedRun({ organization_uuid: input.organization_uuid, workflow_id: workflowId });
  let resume = checkpoint;
  let found = resume ? await read() : null;
  let delayMs = ADOPTED_POLL.firstMs;
  for (;;) {
    if (found?.status === 'COMPLETED') {
      child.attempt = found.attempt;
      return found.state_data ?? {};
    }
    if (resume && found && found.status !== 'RUNNING' && found.last_seq > resume.seq) {
      resume = { ...resume, seq: found.last_seq, attempt: found.attempt };
    }
    child.attempt = resume ? resume.attempt + 1 : 1;
    const policy = resume ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY : WorkflowIdReusePolicy.ALLOW_DUPLICATE;
    try {
      return await runChild(type, workflowId, { ...input, resume: resume && { ...resume, reason: 'retry', attempt: child.attempt } }, policy);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    do {
      await sleep(delayMs);
      delayMs = Math.min(delayMs * 2, ADOPTED_POLL.maxMs);
      found = await read();
    } while (found?.status === 'RUNNING');
  }
}

/**
 * A child is an ordinary engine run of the same organization. A cancel of the parent reaches
 * it, and the parent waits for it to record its own cancelled transition; a parent ended
 * otherwise (terminated, timed out) asks it to cancel rather than killing it mid-transition.
 */
function runChild(
  type: string,
  workflowId: string,
  input: EngineWorkflowInput,
  // A retried layer's child runs again under its id, as the run API's retry does.
  workflowIdReusePolicy: WorkflowIdReusePolicy = WorkflowIdReusePolicy.ALLOW_DUPLICATE,
): Promise<RunData> {
  return executeChild(type, {
    workflowId,
    args: [input],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    workflowIdReusePolicy,
    memo: { [MEMO_WORKFLOW_TYPE]: type },
    typedSearchAttributes: [
      { key: SA_ORGANIZATION, value: input.organization_uuid },
      { key: SA_WORKFLOW_TYPE, value: type },
    ],
  });
}

interface ChildOutcome {
  message: string;
  type: string;
  checkpoint?: FailedRunDetails['checkpoint'];
}

function childOutcome(err: unknown): ChildOutcome {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as FailedRunDetails | undefined;
    return { message: cause.message, type: cause.type ?? 'child_failed', checkpoint: details?.checkpoint };
  }
  return { message: cause instanceof Error ? cause.message : String(cause), type: 'child_failed' };
}

/**
 * What a failed child makes of the parent: the failure naming the layer, after the completed
 * layers' compensations ran (last first). A cancel of the parent stays a cancel, with the
 * child's checkpoint kept so that a retry resumes the child.
 */
async function layerFailure(
  spec: DagSpec<z.ZodType, z.ZodType>,
  index: number,
  err: unknown,
  data: RunData,
  ctx: StepContext,
  child: { childId: string; started: string; attempt: number; type: string },
): Promise<Error> {
  const layer = spec.plan.layers[index];
  const outcome = childOutcome(err);
  if (outcome.checkpoint) ctx.carry[layer.step] = outcome.checkpoint;
  if (isCancellation(err) || CancellationScope.current().consideredCancelled) return new CancelledFailure('run cancelled');
  const compensations = await compensate(spec, index, data, ctx);
  const failedAt = iso(ctx);
  const summary = [...(data.summary as SummaryEntry[])];
  summary[index] = {
    ...summary[index],
    workflow_type: child.type,
    child_workflow_id: child.childId,
    status: 'failed',
    attempt: child.attempt,
    started_at: child.started,
    completed_at: failedAt,
    duration_ms: Date.parse(failedAt) - Date.parse(child.started),
  };
  const patch: RunData = {
    status: 'failed',
    summary,
    completed_at: null,
    compensation_trigger: compensations.length ? { layer: layer.layer, step: layer.step, failure_type: outcome.type } : null,
    compensation_results: compensations.length ? compensations : null,
    ...spec.outputs?.({ ...data, summary }),
  };
  return new StepFailure(
    `layer ${layer.layer} (${child.type}, run ${child.childId}) failed: ${outcome.message}`,
    outcome.type,
    { layer: layer.layer, index, child_workflow_id: child.childId, error: outcome.message },
    patch,
    { step: layer.step, final: compensations.length > 0 || !outcome.checkpoint },
  );
}

async function compensate(spec: DagSpec<z.ZodType, z.ZodType>, failedIndex: number, data: RunData, ctx: StepContext) {
  const results: Array<z.output<typeof compensationResult>> = [];
  for (let j = failedIndex - 1; j >= 0; j--) {
    const layer = spec.plan.layers[j];
    if (!layer.compensation || (data.summary as SummaryEntry[])[j]?.status !== 'succeeded') continue;
    const childId = compensationWorkflowId(ctx.workflow_id, layer.step);
    const base = { layer: layer.layer, step: layer.step, workflow_type: layer.compensation.workflow_type, child_workflow_id: childId };
    try {
      await runChild(layer.compensation.workflow_type, childId, {
        organization_uuid: ctx.organization_uuid,
        initial_data: mappedInputs(layer.compensation.inputs, data),
      });
      results.push({ ...base, status: 'succeeded', error: null });
    } catch (err) {
      if (isCancellation(err)) throw err;
      results.push({ ...base, status: 'failed', error: childOutcome(err).message });
    }
  }
  return results;
}
