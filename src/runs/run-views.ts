import type { runs, transitions } from '../../db/schema';
import { restStateName } from '../catalog/catalog.service';

type RunRow = typeof runs.$inferSelect;
type TransitionRow = typeof transitions.$inferSelect;

export function runView(row: RunRow) {
  return {
    workflow_id: row.workflowId,
    workflow_type: row.workflowType,
    version: row.version,
    organization_uuid: row.organizationUuid,
    state_name: restStateName(row.stateName),
    is_terminal: row.isTerminal,
    status: row.status,
    attempt: row.attempt,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    ...(row.isTerminal ? { state_data: row.stateData ?? {} } : {}),
  };
}

export function transitionView(row: TransitionRow) {
  return {
    seq: row.seq,
    from: restStateName(row.fromState),
    to: restStateName(row.toState),
    action: row.action,
    at: row.at.toISOString(),
    attempt: row.attempt,
    data: row.data,
  };
}

export const startResult = (row: Pick<RunRow, 'workflowId' | 'stateName' | 'isTerminal'>) => ({
  workflow_id: row.workflowId,
  state_name: restStateName(row.stateName),
  is_terminal: row.isTerminal,
});

export type RunView = ReturnType<typeof runView>;
export type TransitionView = ReturnType<typeof transitionView>;
