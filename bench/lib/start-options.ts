import type { WorkflowStartOptions } from '@temporalio/client';
import { MEMO_WORKFLOW_TYPE, SA_ORGANIZATION, SA_STATE, SA_WORKFLOW_TYPE, TASK_QUEUE } from '../../workflows/constants';
import { initialState } from '../../workflows/runtime/definition';
import { findDefinition } from '../../workflows/registry';
import { linear40Definition, tickerDefinition } from '../workflows';

/** The initial state the API would tag a run with (the benchmark's own types included). */
function initialStateOf(workflowType: string): string {
  const def = findDefinition(workflowType) ?? [linear40Definition, tickerDefinition].find((d) => d.workflow_type === workflowType);
  return def ? initialState(def) : 'pending';
}

/** The options the API starts a run with (same input shape, search attributes and memo), for a direct start. */
export function benchStartOptions(
  organization: string,
  workflowType: string,
  workflowId: string,
  initialData: Record<string, unknown>,
  taskQueue = TASK_QUEUE,
): WorkflowStartOptions {
  return {
    taskQueue,
    workflowId,
    args: [{ organization_uuid: organization, initial_data: initialData }],
    memo: { [MEMO_WORKFLOW_TYPE]: workflowType },
    typedSearchAttributes: [
      { key: SA_ORGANIZATION, value: organization },
      { key: SA_WORKFLOW_TYPE, value: workflowType },
      { key: SA_STATE, value: initialStateOf(workflowType) },
    ],
  };
}
