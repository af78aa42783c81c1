import { z } from 'zod';
import type { DagPlan } from './dag-plan';

export type WorkflowKind = 'Atomic' | 'Linear' | 'Dag';

export const ANY_STATE = '*';

export interface StateSpec {
  initial?: boolean;
  terminal?: boolean;
  success?: boolean;
  /** Action the runtime takes as soon as the run enters this state. */
  auto_advance?: string;
  /** For a state without auto-advance: the action a retry re-drives it with (else the action that failed). */
  retry_action?: string;
}

export interface TransitionSpec {
  from: string;
  action: string;
  to: string;
}

/** A connection of this plugin must exist before a run can succeed. */
export interface Prerequisite {
  plugin: string;
  description: string;
}

export type RunData = Record<string, unknown>;

export interface StepContext {
  workflow_id: string;
  organization_uuid: string;
  workflow_type: string;
  state: string;
  action: string;
  attempt: number;
  /** Workflow time: deterministic under replay. */
  now(): Date;
  /**
   * Kept with the run's checkpoint for a retry or a continue-as-new, never projected nor shown:
   * a handler writes here what it needs to pick up where it failed (a Dag keeps its failed child's checkpoint).
   */
  carry: RunData;
}

export interface StepResult {
  /** Fields merged into the run's state data when the transition is recorded. */
  patch?: RunData;
  /** The next transition, taken after a durable timer of delay_seconds. */
  schedule?: { action: string; delay_seconds: number };
}

export type ActionHandler = (data: RunData, ctx: StepContext) => Promise<StepResult | void>;

/** Which timestamp/action field a type's outputs carry besides the common failure fields. */
export type FailureStamp = 'failed_at' | 'failed_action';

/** Input fields the API sets from an end user's token when an end user starts the type, whatever was sent. */
export const END_USER_FIELDS = { end_user_uuid: 'user_id', client_uuid: 'client_uuid' } as const;

export interface WorkflowDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  workflow_type: string;
  version: string;
  kind: WorkflowKind;
  description: string;
  input: I;
  /**
   * The input schema of the runs started before `input` became stricter, until `patch`: such a run
   * replays with the input it was accepted with; a run started since is held to `input`.
   */
  input_before?: { patch: string; schema: z.ZodType };
  output: O;
  states: Record<string, StateSpec>;
  transitions: TransitionSpec[];
  /** Whether an end user's token may start it; END_USER_FIELDS in its input are then set from the token. */
  exposed_to_end_users: boolean;
  prerequisites: Prerequisite[];
  /** Input fields never shown in clear: replaced by "[redacted]" in outputs, history and projection. */
  secret_fields: string[];
  /**
   * Inputs a run consumes without echoing them: left out of its result, its terminal state_data
   * and its failure's output (a retry's checkpoint keeps them). For an input as large as a raw
   * webhook body: Temporal refuses a result over 2 MiB, and a run whose result it refuses never ends.
   */
  unechoed_fields?: string[];
  /** URL inputs the worker will call: checked at start against the outbound policy (https unless ALLOW_HTTP_HOSTS; an address literal must be public or in OUTBOUND_ALLOW). */
  outbound_url_fields: string[];
  /**
   * A connection input and the URL input its secrets would be sent to: a run naming both must
   * keep to the connection's stored destination (same origin), checked at start (422) and
   * again by the activity before any call.
   */
  connection_url_fields?: Array<{ connection: string; url: string; plugin: string }>;
  failure_stamp: FailureStamp;
  /**
   * For a type whose spec types failed_layer otherwise than as text (an integer in
   * payments.webhooks.receive): the value it records for a failure, from the runtime's classification.
   */
  failed_layer_of?: (failure: { failure_type: string; failed_layer: unknown }) => unknown;
  /**
   * Outputs a run ending through `fail` carries besides the failure fields, whatever failed it
   * (invalid input, a cancel, a handler): a Dag's status, summary and compensations. What the
   * failure itself patched wins over them.
   */
  failure_outputs?: (data: RunData, ctx: StepContext) => RunData;
  /** An input naming the run's organization: the API refuses a start whose value is not the token's (403 organization_mismatch). */
  organization_field?: string;
  /** An input the API takes as the start's Idempotency-Key when the request carries none: same key, same organization, same run. */
  idempotency_key_field?: string;
  /** A Dag type's layers (see runtime/dag.ts), shown by the catalog. */
  plan?: DagPlan;
  actions: Record<string, ActionHandler>;
}

export const REDACTED = '[redacted]';

/** The failure fields every workflow type's output carries (all optional). */
export const failureFields = {
  failure_reason: z.string().optional(),
  failure_type: z.string().optional(),
  failed_step: z.string().optional(),
  failed_layer: z.string().optional(),
  failed_at_state: z.string().optional(),
  error: z.string().optional(),
  error_type: z.string().optional(),
};

export function defineWorkflow<I extends z.ZodType, O extends z.ZodType>(
  definition: WorkflowDefinition<I, O>,
): WorkflowDefinition<I, O> {
  assertWellFormed(definition);
  return definition;
}

export function initialState(def: WorkflowDefinition): string {
  return Object.entries(def.states).find(([, s]) => s.initial)![0];
}

export function findTransition(def: WorkflowDefinition, from: string, action: string): TransitionSpec | undefined {
  return (
    def.transitions.find((t) => t.from === from && t.action === action) ??
    def.transitions.find((t) => t.from === ANY_STATE && t.action === action)
  );
}

/** Definition mistakes are programming errors: they surface when the module loads, in every test. */
function assertWellFormed(def: WorkflowDefinition): void {
  const problems: string[] = [];
  const names = Object.keys(def.states);
  const initials = names.filter((n) => def.states[n].initial);
  if (initials.length !== 1) problems.push(`exactly one initial state expected, found ${initials.length}`);
  for (const t of def.transitions) {
    if (t.from !== ANY_STATE && !def.states[t.from]) problems.push(`transition ${t.action}: unknown from-state ${t.from}`);
    if (!def.states[t.to]) problems.push(`transition ${t.action}: unknown to-state ${t.to}`);
  }
  for (const [name, s] of Object.entries(def.states)) {
    if (s.auto_advance && !findTransition(def, name, s.auto_advance))
      problems.push(`state ${name}: auto-advance ${s.auto_advance} has no transition`);
    if (s.terminal && s.auto_advance) problems.push(`state ${name}: a terminal state cannot auto-advance`);
    if (s.retry_action && !findTransition(def, name, s.retry_action))
      problems.push(`state ${name}: retry action ${s.retry_action} has no transition`);
  }
  const fail = def.transitions.find((t) => t.action === 'fail');
  if (!fail || fail.from !== ANY_STATE || !def.states[fail.to]?.terminal || def.states[fail.to]?.success)
    problems.push('a fail transition from any state to a failed terminal state is required');
  // The engine fails a run through findTransition(state, 'fail'), where a state's own fail wins.
  for (const t of def.transitions) {
    if (t.action === 'fail' && t.from !== ANY_STATE && (!def.states[t.to]?.terminal || def.states[t.to]?.success))
      problems.push(`state ${t.from}: its fail transition must lead to a failed terminal state`);
  }
  if (!names.some((n) => def.states[n].terminal && def.states[n].success)) problems.push('no success state');
  if (problems.length) throw new Error(`workflow definition ${def.workflow_type}: ${problems.join('; ')}`);
}
