import type { RunData } from './definition';

/**
 * The argument of every engine workflow. A service starting a run with the
 * Temporal client directly passes exactly this (see README, "Starting runs
 * with the Temporal client").
 */
export interface EngineWorkflowInput {
  organization_uuid: string;
  initial_data: RunData;
  /** Set by the engine only: a retry or a continue-as-new picking the run up. */
  resume?: ResumePoint;
}

export interface ResumePoint {
  reason: 'retry' | 'continue';
  state: string;
  data: RunData;
  seq: number;
  attempt: number;
  next?: { action: string; delay_seconds: number };
  /** What handlers keep for a retry besides the run's data, never projected (a Dag's failed child's checkpoint). */
  carry?: RunData;
}

/**
 * Carried in the ApplicationFailure that ends a failed run; the API's retry
 * reads it. No checkpoint means there is nothing to re-drive (invalid input).
 */
export interface FailedRunDetails {
  checkpoint?: Omit<ResumePoint, 'reason'>;
  output: RunData;
}

export const RUN_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type TerminalStatus = Exclude<RunStatus, 'RUNNING'>;

/** The failure_type of a run ended by a cancel request; its status is CANCELLED. */
export const CANCELLED = 'cancelled';

export interface RunStartedEvent {
  workflow_id: string;
  organization_uuid: string;
  workflow_type: string;
  version: string;
  state_name: string;
  attempt: number;
  at: string;
  /** The schedule whose action started the run (from the memo), for GET /workflows?schedule_id=. */
  schedule_id?: string;
  /** The end user who started the run (from the memo); only they and the organization read it. */
  owner?: RunOwner;
  /**
   * Temporal's firstExecutionRunId of the execution writing (the run id its start returned, for the
   * API's registration): which chain of executions under this workflow id the write belongs to.
   * Absent only where the writer does not know it (a start that found the run started already).
   */
  first_execution_run_id?: string;
}

export interface RunOwner {
  end_user_uuid: string;
  client_uuid: string;
}

export interface TransitionEvent extends Omit<RunStartedEvent, 'state_name' | 'schedule_id' | 'owner'> {
  seq: number;
  from: string;
  to: string;
  action: string;
  data: RunData;
  terminal?: { status: TerminalStatus; state_data: RunData };
}

/**
 * The failure type of a projection write the database refused for its data (SQLSTATE class 22 or
 * 54): no retry can store it, so the write fails at once and the run fails with this type.
 */
export const PROJECTION_REJECTED = 'projection_rejected';

/**
 * The failure type of a projection write refused because the run under its workflow id is another
 * one: another organization's, or an execution that is neither that run's own nor its retry.
 * Non-retryable: the execution fails before any step runs, and the run keeps its row and history.
 */
export const WORKFLOW_ID_IN_USE = 'workflow_id_in_use';

/** The message of that failure; it names no organization and no data. */
export function workflowIdInUse(workflowId: string): string {
  return `workflow id ${workflowId} is in use: a workflow id names one run of this service; use a new id, or POST /api/workflows/${workflowId}/retry`;
}

/** Implemented in activities/projection.ts; idempotent on (workflow_id, seq). */
export interface ProjectionActivities {
  projectRunStarted(event: RunStartedEvent): Promise<void>;
  projectTransition(event: TransitionEvent): Promise<void>;
}

/** What the projection holds of a run: a Dag reads it for a layer's child started outside the parent. */
export interface ProjectedRun {
  status: RunStatus;
  attempt: number;
  last_seq: number;
  state_data: RunData | null;
}

/** Implemented in activities/projection.ts (dagChildReads). */
export interface DagChildActivities {
  /** The run of that id in that organization, or null when the projection has none. */
  projectedRun(input: { organization_uuid: string; workflow_id: string }): Promise<ProjectedRun | null>;
}
