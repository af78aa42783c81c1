import { MEMO_END_USER, MEMO_SCHEDULE_ID, MEMO_WORKFLOW_TYPE, SA_ORGANIZATION, SA_STATE, SA_WORKFLOW_TYPE, TASK_QUEUE } from '../../workflows/constants';
import type { RunOwner } from '../../workflows/runtime/contract';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';

/** Where a run comes from, carried in its memo for the workflow's own projection of its start. */
export interface RunOrigin {
  scheduleId?: string;
  owner?: RunOwner;
}

/**
 * What every engine execution is started with (task queue, memo, search attributes), whether the
 * API starts it, retries it or a schedule's action does, so all of them are projected alike.
 */
export function engineStartOptions(def: WorkflowDefinition, organizationUuid: string, state: string, origin: RunOrigin = {}) {
  return {
    taskQueue: TASK_QUEUE,
    memo: {
      [MEMO_WORKFLOW_TYPE]: def.workflow_type,
      ...(origin.scheduleId ? { [MEMO_SCHEDULE_ID]: origin.scheduleId } : {}),
      ...(origin.owner ? { [MEMO_END_USER]: origin.owner } : {}),
    },
    typedSearchAttributes: [
      { key: SA_ORGANIZATION, value: organizationUuid },
      { key: SA_WORKFLOW_TYPE, value: def.workflow_type },
      { key: SA_STATE, value: state },
    ],
  };
}
