import { ApplicationFailure } from '@temporalio/common';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/client';
import { runs, transitions } from '../db/schema';
import { PROJECTION_REJECTED, type ProjectionActivities, type RunStartedEvent, type TransitionEvent } from '../workflows/runtime/contract';
import { storable } from '../workflows/runtime/storable-text';
import { isRefusedData, sqlState } from './database-errors';

/**
 * NOTIFY channel carrying "<workflow_id>:<seq>" for each committed transition, with "t" appended
 * when it ended the run: listeners that split the id off at the last ':' read both forms.
 */
export const TRANSITIONS_CHANNEL = 'workflow_transitions';

/**
 * The only writer of run state in Postgres. Every write is idempotent, so a
 * retried activity (or the API pre-registering a run) never duplicates or
 * loses a transition.
 */
export function createProjection(db: Database): ProjectionActivities {
  const runRow = (e: RunStartedEvent | TransitionEvent, stateName: string) => ({
    workflowId: e.workflow_id,
    organizationUuid: e.organization_uuid,
    workflowType: e.workflow_type,
    version: e.version,
    stateName,
    status: 'RUNNING',
    attempt: e.attempt,
    createdAt: new Date(e.at),
    updatedAt: new Date(e.at),
  });

  const writes: ProjectionActivities = {
    // Postgres refuses NUL and lone surrogates, which a provider's answer or a direct start's ids
    // may carry: the projection replaces them rather than stall the run on a write that can never succeed.
    async projectRunStarted(event) {
      const e = storable(event);
      await db
        .insert(runs)
        .values({ ...runRow(e, e.state_name), scheduleId: e.schedule_id ?? null })
        .onConflictDoUpdate({
          target: runs.workflowId,
          set: {
            status: 'RUNNING',
            isTerminal: false,
            stateName: e.state_name,
            stateData: null,
            attempt: e.attempt,
            updatedAt: new Date(e.at),
          },
          // A newer attempt re-opens the run; a repeated start of the same attempt changes nothing.
          setWhere: lt(runs.attempt, e.attempt),
        });
    },

    async projectTransition(event) {
      const e = storable(event);
      await db.transaction(async (tx) => {
        await tx.insert(runs).values(runRow(e, e.from)).onConflictDoNothing();
        const inserted = await tx
          .insert(transitions)
          .values({
            workflowId: e.workflow_id,
            seq: e.seq,
            fromState: e.from,
            toState: e.to,
            action: e.action,
            attempt: e.attempt,
            at: new Date(e.at),
            data: e.data,
          })
          .onConflictDoNothing()
          .returning({ seq: transitions.seq });
        if (!inserted.length) return;
        await tx
          .update(runs)
          .set({
            stateName: e.to,
            lastSeq: e.seq,
            updatedAt: new Date(e.at),
            isTerminal: Boolean(e.terminal),
            status: e.terminal?.status ?? 'RUNNING',
            stateData: e.terminal?.state_data ?? null,
          })
          .where(and(eq(runs.workflowId, e.workflow_id), lt(runs.lastSeq, e.seq)));
        await tx.execute(sql`select pg_notify(${TRANSITIONS_CHANNEL}, ${`${e.workflow_id}:${e.seq}${e.terminal ? 't' : ''}`})`);
      });
    },
  };
  return {
    projectRunStarted: (event) => refusedDataFailsForGood(`the start of attempt ${event.attempt}`, () => writes.projectRunStarted(event)),
    projectTransition: (event) => refusedDataFailsForGood(`transition ${event.seq}`, () => writes.projectTransition(event)),
  };
}

/**
 * A write the database refuses for its data becomes a non-retryable failure, so the run fails
 * instead of retrying it forever; anything else (a lost connection, a time-out) is thrown as it
 * is and retried. The message names only the SQLSTATE: the database's own message and Drizzle's
 * quote the values, and failure messages are stored in clear.
 */
async function refusedDataFailsForGood(what: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!isRefusedData(err)) throw err;
    throw ApplicationFailure.nonRetryable(`the database refused to store ${what} (SQLSTATE ${sqlState(err)})`, PROJECTION_REJECTED);
  }
}
