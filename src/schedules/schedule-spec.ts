import type { ScheduleDescription, ScheduleSpec } from '@temporalio/client';
import { OVERLAP_POLICIES, type ScheduleBody } from './schedule-body';

/** At most this many upcoming times in a schedule's view. */
export const NEXT_ACTION_TIMES = 5;

/** When a schedule's actions fire, as Temporal takes it. */
export function scheduleSpec(body: Pick<ScheduleBody, 'cron' | 'interval_seconds' | 'timezone'>): ScheduleSpec {
  if (body.cron !== undefined) return { cronExpressions: [body.cron], timezone: body.timezone };
  if (body.interval_seconds !== undefined) return { intervals: [{ every: body.interval_seconds * 1000 }], timezone: body.timezone };
  throw new Error('a schedule needs cron or interval_seconds');
}

export const overlapPolicy = (overlap: ScheduleBody['overlap']) => OVERLAP_POLICIES[overlap];

/** What changes on Temporal's side: paused, the next times and the runs its actions started. */
export function scheduleState(description: Pick<ScheduleDescription, 'state' | 'info'>) {
  return {
    paused: description.state.paused,
    next_action_times: description.info.nextActionTimes.slice(0, NEXT_ACTION_TIMES).map((t) => t.toISOString()),
    recent_runs: description.info.recentActions.flatMap((a) =>
      a.action.type === 'startWorkflow' ? [{ workflow_id: a.action.workflow.workflowId, started_at: a.takenAt.toISOString() }] : [],
    ),
  };
}
