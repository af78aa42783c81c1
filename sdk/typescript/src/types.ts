/** The API's bodies, as the OpenAPI document (/api/openapi.json) describes them. */

export type RunStatus = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface WorkflowTypeSummary {
  workflow_type: string;
  version: string;
  kind: string;
  description: string;
  has_prerequisites: boolean;
}
export interface TypeList {
  types: WorkflowTypeSummary[];
  namespaces: Array<{ name: string; count: number }>;
}
export interface TypeSchema {
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  has_prerequisites: boolean;
}
export interface TypeDefinition {
  workflow_type: string;
  version: string;
  kind: 'Atomic' | 'Linear' | 'Dag';
  description: string;
  states: Array<{ name: string; initial: boolean; terminal: boolean; success: boolean; auto_advance: string | null }>;
  transitions: Array<{ from: string; action: string; to: string }>;
  exposed_to_end_users: boolean;
  has_prerequisites: boolean;
}
export interface Prerequisites {
  workflow_type: string;
  satisfied: boolean;
  required: Array<{ plugin: string; fields: string[]; connections: string[] }>;
  steps: string[];
}

export interface StartResult {
  workflow_id: string;
  state_name: string;
  is_terminal: boolean;
}
export interface Run<Output = Record<string, unknown>> {
  workflow_id: string;
  workflow_type: string;
  version: string;
  organization_uuid: string;
  state_name: string;
  is_terminal: boolean;
  status: RunStatus;
  attempt: number;
  created_at: string;
  updated_at: string;
  /** The type's output, once terminal. */
  state_data?: Output;
}
export interface RunListFilters {
  workflow_type?: string;
  status?: RunStatus;
  state_name?: string;
  schedule_id?: string;
  /** Page size, 1–100 (API default 20). */
  limit?: number;
  cursor?: string;
}
export interface RunPage {
  runs: Run[];
  next_cursor: string | null;
}
export interface HistoryTransition {
  seq: number;
  from: string;
  to: string;
  action: string;
  at: string;
  attempt: number;
  data: unknown;
}
export interface RunHistory {
  workflow_id: string;
  transitions: HistoryTransition[];
}
export interface CancelResult {
  workflow_id: string;
  cancel_requested: boolean;
}

export interface Plugin {
  name: string;
  description: string;
  fields: string[];
  secrets_schema: Record<string, unknown>;
  config_schema: Record<string, unknown>;
}
export interface Connection {
  connection_uuid: string;
  plugin: string;
  name: string;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}
export interface ConnectionCreated {
  connection_uuid: string;
  plugin: string;
  name: string;
  created_at: string;
}
export interface ConnectionInput {
  plugin: string;
  name: string;
  secrets: Record<string, unknown>;
  config?: Record<string, unknown>;
}
export interface ConnectionUpdate {
  name?: string;
  secrets?: Record<string, unknown>;
  config?: Record<string, unknown>;
}

export interface Me {
  user_id: string;
  organization_uuid: string;
  username: string;
  token_type: string;
  principal_type: string;
}

export type ScheduleOverlap = 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other' | 'terminate_other' | 'allow_all';
export interface Schedule {
  schedule_id: string;
  workflow_type: string;
  /** Secret fields read back as "[redacted]". */
  initial_data: Record<string, unknown>;
  cron: string | null;
  interval_seconds: number | null;
  timezone: string;
  overlap: ScheduleOverlap;
  paused: boolean;
  created_at: string;
  next_action_times: string[];
  recent_runs: Array<{ workflow_id: string; started_at: string }>;
}
/** Exactly one of `cron` and `interval_seconds`. */
export type ScheduleInput = {
  workflow_type: string;
  initial_data: Record<string, unknown>;
  timezone?: string;
  overlap?: ScheduleOverlap;
  paused?: boolean;
} & ({ cron: string; interval_seconds?: never } | { interval_seconds: number; cron?: never });
export interface ScheduleTriggered {
  schedule_id: string;
  triggered: boolean;
}
