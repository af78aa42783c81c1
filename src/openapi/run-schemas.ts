import { z } from 'zod';
import { RUN_STATUSES } from '../../workflows/runtime/contract';
import { OVERLAP_POLICIES, type Overlap } from '../schedules/schedule-body';

/**
 * The answers of the run and catalog routes: the OpenAPI document and the MCP tools' output
 * schemas are both derived from these, so an agent sees exactly what the API returns.
 */
const typeVersion = z.string().describe("The type's version, <major>.<minor>: a composed type virtual.<composition_uuid>@N is N.0");

export const startResult = z.object({ workflow_id: z.string(), state_name: z.string(), is_terminal: z.boolean() });
export const cancelResult = z.object({ workflow_id: z.string(), cancel_requested: z.literal(true) });
export const run = z.object({
  workflow_id: z.string(),
  workflow_type: z.string(),
  version: typeVersion,
  organization_uuid: z.string(),
  state_name: z.string(),
  is_terminal: z.boolean(),
  status: z.enum(RUN_STATUSES),
  attempt: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
  state_data: z.record(z.string(), z.unknown()).optional().describe('The output of the workflow type, once terminal'),
});
export const transition = z.object({
  seq: z.int(),
  from: z.string(),
  to: z.string(),
  action: z.string(),
  at: z.string(),
  attempt: z.int(),
  data: z.unknown(),
});
export const typeList = z.object({
  types: z.array(
    z.object({ workflow_type: z.string(), version: typeVersion, kind: z.string(), description: z.string(), has_prerequisites: z.boolean() }),
  ),
  namespaces: z.array(z.object({ name: z.string(), count: z.int() })),
});
export const definition = z.object({
  workflow_type: z.string(),
  version: typeVersion,
  kind: z.enum(['Atomic', 'Linear', 'Dag']),
  description: z.string(),
  states: z.array(
    z.object({ name: z.string(), initial: z.boolean(), terminal: z.boolean(), success: z.boolean(), auto_advance: z.string().nullable() }),
  ),
  transitions: z.array(z.object({ from: z.string(), action: z.string(), to: z.string() })),
  exposed_to_end_users: z.boolean(),
  has_prerequisites: z.boolean(),
  layers: z
    .array(
      z.object({
        index: z.int(),
        layer: z.string(),
        step: z.string(),
        workflow_type: z.string().describe('The child type, or "route": the type the nearest earlier step\'s route_workflow_type output names'),
        state: z.string().describe('The parent state while this layer\'s child runs'),
        child_workflow_id: z.string().describe('Pattern of the child run\'s workflow id'),
        inputs: z.record(z.string(), z.unknown()).describe('How each child input is built: {from:"input",name} | {from:"step",step,field} | {const}'),
        compensation: z.object({ workflow_type: z.string(), inputs: z.record(z.string(), z.unknown()) }).nullable(),
      }),
    )
    .optional()
    .describe('Dag types only: the layers in order'),
  child_retry: z.string().optional().describe('Dag types only: how a retry of the parent treats the failed child'),
});
export const typeSchema = z.object({ input_schema: z.record(z.string(), z.unknown()), output_schema: z.record(z.string(), z.unknown()), has_prerequisites: z.boolean() });
export const prerequisites = z.object({
  workflow_type: z.string(),
  satisfied: z.boolean(),
  required: z.array(z.object({ plugin: z.string(), fields: z.array(z.string()), connections: z.array(z.string()) })),
  steps: z.array(z.string()),
});
export const scheduleView = z.object({
  schedule_id: z.string(),
  workflow_type: z.string(),
  initial_data: z.record(z.string(), z.unknown()).describe('As given, secret fields as "[redacted]"'),
  cron: z.string().nullable(),
  interval_seconds: z.int().nullable(),
  timezone: z.string(),
  overlap: z.enum(Object.keys(OVERLAP_POLICIES) as [Overlap, ...Overlap[]]),
  paused: z.boolean(),
  created_at: z.string(),
  next_action_times: z.array(z.string()).max(5),
  recent_runs: z.array(z.object({ workflow_id: z.string(), started_at: z.string() })),
});
export const scheduleTriggered = z.object({ schedule_id: z.string(), triggered: z.literal(true) });
