import { ApplicationFailure } from '@temporalio/common';
import { and, eq, getTableName, type Table } from 'drizzle-orm';
import type { Database } from '../db/client';
import { preparedStatement } from '../db/prepared-statement';
import { runs, transitions } from '../db/schema';
import { type DagChildActivities, PROJECTION_REJECTED, type ProjectionActivities, type RunStatus } from '../workflows/runtime/contract';
import type { RunData } from '../workflows/runtime/definition';
import { storable } from '../workflows/runtime/storable-text';
import { isRefusedData, sqlState } from './database-errors';
import { registrationsOf, workflowIdInUseFailure } from './run-registrations';

/**
 * NOTIFY channel carrying "<workflow_id>:<seq>" for each committed transition, with "t" appended
 * when it ended the run: listeners that split the id off at the last ':' read both forms.
 */
export const TRANSITIONS_CHANNEL = 'workflow_transitions';

/**
 * Every transition, in one statement, so one round trip and its own transaction: the transition,
 * the run row moved to it (created with it for a run whose start was not projected: a direct
 * start), and the notification, all only when this (workflow_id, seq) is new and the row under
 * that id is this run's: its organization's, and of its execution chain (rows written before the
 * chain was recorded take the first one that writes to them). A row that is another run's is left
 * as it is, and the statement returns a row saying so. Its CTEs share one snapshot, so the update
 * cannot see a row the insert creates; that row is written in its final state. Prepared
 * (db/prepared-statement.ts): it runs at every step of every run. Its values, in order:
 * workflow_id, seq, from, to, action, attempt, at, data, organization_uuid, workflow_type,
 * version, is_terminal, status, state_data, the notice, first_execution_run_id.
 */
const PROJECT_TRANSITION = `
  with run as (
    select organization_uuid = $9 and (first_execution_run_id is null or $16::text is null or first_execution_run_id = $16) as ours
    from ${table(runs)} where workflow_id = $1
  ),
  inserted as (
    insert into ${table(transitions)} (workflow_id, seq, from_state, to_state, action, attempt, at, data)
    select $1, $2, $3, $4, $5, $6, $7::timestamptz, $8::jsonb
    where coalesce((select ours from run), true)
    on conflict do nothing
    returning pg_notify('${TRANSITIONS_CHANNEL}', $15)
  ),
  created as (
    insert into ${table(runs)} (workflow_id, organization_uuid, workflow_type, version, state_name, is_terminal, status, attempt, last_seq, state_data, first_execution_run_id, created_at, updated_at)
    select $1, $9, $10, $11, $4, $12, $13, $6, $2, $14::jsonb, $16, $7::timestamptz, $7::timestamptz
    from inserted
    on conflict do nothing
  ),
  moved as (
    update ${table(runs)}
    set state_name = $4, last_seq = $2, updated_at = $7::timestamptz, is_terminal = $12, status = $13, state_data = $14::jsonb,
      first_execution_run_id = coalesce(first_execution_run_id, $16)
    where workflow_id = $1 and last_seq < $2 and exists (select from inserted)
  )
  select 'refused' from run where not ours`;

/**
 * The only writer of run state in Postgres. Every write is idempotent, so a
 * retried activity (or the API pre-registering a run) never duplicates or
 * loses a transition.
 */
export function createProjection(db: Database): ProjectionActivities {
  const writeTransition = preparedStatement(db, 'engine_project_transition', PROJECT_TRANSITION);
  const registrations = registrationsOf(db);
  const writes: ProjectionActivities = {
    async projectRunStarted(event) {
      await registrations.projectRunStarted(event);
    },

    // Postgres refuses NUL and lone surrogates, which a provider's answer or a direct start's ids
    // may carry: the projection replaces them rather than stall the run on a write that can never succeed.
    async projectTransition(event) {
      const e = storable(event);
      const status = e.terminal?.status ?? 'RUNNING';
      const refused = await writeTransition([
        e.workflow_id,
        e.seq,
        e.from,
        e.to,
        e.action,
        e.attempt,
        new Date(e.at).toISOString(),
        JSON.stringify(e.data),
        e.organization_uuid,
        e.workflow_type,
        e.version,
        Boolean(e.terminal),
        status,
        e.terminal ? JSON.stringify(e.terminal.state_data) : null,
        `${e.workflow_id}:${e.seq}${e.terminal ? 't' : ''}`,
        e.first_execution_run_id ?? null,
      ]);
      if (refused.length) throw workflowIdInUseFailure(event.workflow_id);
    },
  };
  return {
    projectRunStarted: (event) => refusedDataFailsForGood(`the start of attempt ${event.attempt}`, () => writes.projectRunStarted(event)),
    projectTransition: (event) => refusedDataFailsForGood(`transition ${event.seq}`, () => writes.projectTransition(event)),
  };
}

export function dagChildReads(db: Database): DagChildActivities {
  return {
    async projectedRun({ organization_uuid, workflow_id }) {
      const [row] = await db
        .select({ status: runs.status, attempt: runs.attempt, last_seq: runs.lastSeq, state_data: runs.stateData })
        .from(runs)
        .where(and(eq(runs.workflowId, workflow_id), eq(runs.organizationUuid, organization_uuid)));
      return row ? { ...row, status: row.status as RunStatus, state_data: row.state_data as RunData | null } : null;
    },
  };
}

function table(t: Table): string {
  return `"${getTableName(t)}"`;
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
