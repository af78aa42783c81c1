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

export type HookSecretSource = 'generated' | 'secret_ref';
export interface HookEndpoint {
  endpoint_uuid: string;
  name: string;
  target_url: string;
  /** POST events here, without a bearer token. */
  ingress_url: string;
  secret_source: HookSecretSource;
  secret_ref: string | null;
  state: string;
  created_at: string;
}
export interface HookEndpointInput {
  /** Unique in the organization. */
  name: string;
  /** https unless the host is in ALLOW_HTTP_HOSTS; no non-public address outside OUTBOUND_ALLOW. */
  target_url: string;
  /** `<connection_uuid>/<secret_name>`: a string secret of a connection becomes the signing secret. */
  secret_ref?: string;
}
export interface HookEndpointCreated extends HookEndpoint {
  /** Shown once, here: the API never returns it again. Absent when the secret came from `secret_ref`. */
  signing_secret?: string;
}
export interface HookSecretRotated extends HookEndpoint {
  /** The new secret, shown once, here: the API never returns it again. */
  signing_secret: string;
}
export type HookEventState = 'pending' | 'delivered' | 'acknowledged' | 'expired';
export interface HookDeliveryAttempt {
  at: string;
  status_code: number | null;
  latency_ms: number;
  error?: string;
}
export interface HookEvent {
  event_uuid: string;
  endpoint_uuid: string;
  state: HookEventState;
  /** As received. */
  body: string;
  headers: Record<string, string>;
  received_at: string;
  delivered_at: string | null;
  acknowledged_at: string | null;
  expired_at: string | null;
  attempts: HookDeliveryAttempt[];
}
export interface HookEventReplayed {
  event_uuid: string;
  /** The hook.replay-event run delivering it. */
  workflow_id: string;
}

/** Where a step's input field comes from. */
export type CompositionMapping = { from: 'input'; name: string } | { from: 'step'; step: string; field: string } | { const: unknown };
export interface CompositionStep {
  /** Lower-case letter then up to 62 lower-case letters, digits or _. */
  id: string;
  /** A built-in workflow type, or "route". */
  workflow_type: string;
  inputs?: Record<string, CompositionMapping>;
}
export interface CompositionInput {
  name: string;
  steps: CompositionStep[];
  exposed_to_end_users?: boolean;
}
export interface CompositionCreated {
  composition_uuid: string;
  version: number;
  /** `virtual.<composition_uuid>@<version>`: start it with `engine.workflows.start`. */
  workflow_type: string;
  /** JSON Schema of the free inputs (those mapped `{ from: 'input' }`). */
  input_schema: Record<string, unknown>;
}
export interface Composition extends CompositionCreated {
  name: string;
  exposed_to_end_users: boolean;
  steps: Array<Required<CompositionStep>>;
  created_at: string;
  updated_at: string;
}
export interface CompositionDetail extends Composition {
  /** Newest first; every one startable. */
  versions: Array<{ version: number; workflow_type: string; created_at: string }>;
}

export interface Entitlement {
  entitlement_uuid: string;
  subject: string;
  source_event_id: string;
  event_type: string;
  object_id: string | null;
  event_metadata: Record<string, unknown>;
  workflow_id: string;
  granted_at: string;
}
export interface EntitlementFilters {
  /** Only this subject (client_reference_id or customer_id of the payment). */
  subject?: string;
  /** Page size, 1–100 (API default 20). */
  limit?: number;
  cursor?: string;
}
export interface EntitlementPage {
  entitlements: Entitlement[];
  next_cursor: string | null;
}

/** An end-user sign-in app (identity.app.provision). */
export interface App {
  client_key: string;
  client_uuid: string;
  name: string;
  redirect_uris: string[];
  created_at: string;
  updated_at: string;
}
