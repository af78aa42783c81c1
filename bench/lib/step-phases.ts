import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mean, round } from './stats';

const T = temporal.api.enums.v1.EventType;

/** A step's time, from its run's history: which side of the server–worker loop it was spent on. */
export interface StepPhases {
  /** ActivityTaskScheduled → ActivityTaskStarted: dispatch (eager: inside the workflow task's answer). */
  activity_dispatch: number;
  /** ActivityTaskStarted → ActivityTaskCompleted: the worker runs the activity (and anything it waits for). */
  activity_run: number;
  /** ActivityTaskCompleted → WorkflowTaskScheduled: the server takes the result. */
  result_to_task: number;
  /** WorkflowTaskScheduled → WorkflowTaskStarted: the next workflow task reaches the worker. */
  task_dispatch: number;
  /** WorkflowTaskStarted → WorkflowTaskCompleted: the worker decides the next step. */
  task_run: number;
  /** WorkflowTaskCompleted → the next ActivityTaskScheduled: the server records the decision. */
  decision_to_activity: number;
}

const millis = (e: temporal.api.history.v1.IHistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/**
 * Per step (one activity and the workflow task after it), the mean time between the history
 * events around it, over the given runs. The server stamps the events, so what the worker does
 * shows up in activity_run and task_run, and Temporal's own hops in the rest.
 */
export async function stepPhases(client: Client, workflowIds: string[]): Promise<StepPhases> {
  const acc: Record<keyof StepPhases, number[]> = {
    activity_dispatch: [],
    activity_run: [],
    result_to_task: [],
    task_dispatch: [],
    task_run: [],
    decision_to_activity: [],
  };
  for (const id of workflowIds) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const at = (i: number) => millis(events[i]);
    const next = (from: number, type: temporal.api.enums.v1.EventType) => {
      for (let j = from + 1; j < events.length; j++) if (events[j].eventType === type) return j;
      return -1;
    };
    for (let i = 0; i < events.length; i++) {
      if (events[i].eventType !== T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) continue;
      const started = next(i, T.EVENT_TYPE_ACTIVITY_TASK_STARTED);
      const completed = next(i, T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
      const wtScheduled = next(completed, T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
      const wtStarted = next(wtScheduled, T.EVENT_TYPE_WORKFLOW_TASK_STARTED);
      const wtCompleted = next(wtStarted, T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      if ([started, completed, wtScheduled, wtStarted, wtCompleted].some((j) => j < 0)) continue;
      acc.activity_dispatch.push(at(started) - at(i));
      acc.activity_run.push(at(completed) - at(started));
      acc.result_to_task.push(at(wtScheduled) - at(completed));
      acc.task_dispatch.push(at(wtStarted) - at(wtScheduled));
      acc.task_run.push(at(wtCompleted) - at(wtStarted));
      const nextActivity = next(wtCompleted, T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      if (nextActivity >= 0) acc.decision_to_activity.push(at(nextActivity) - at(wtCompleted));
    }
  }
  return Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, round(mean(v), 3)])) as unknown as StepPhases;
}
