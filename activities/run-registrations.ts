import { ApplicationFailure } from '@temporalio/common';
import { getTableName } from 'drizzle-orm';
import type { Database } from '../db/client';
import { preparedStatement, type Statement } from '../db/prepared-statement';
import { runs } from '../db/schema';
import { type RunStartedEvent, WORKFLOW_ID_IN_USE, workflowIdInUse } from '../workflows/runtime/contract';
import { storable } from '../workflows/runtime/storable-text';
import { isRefusedData } from './database-errors';

const RUNS = `"${getTableName(runs)}"`;

/** Of a start taken onto its run's row: a newer attempt is the run's retry, which re-opens it. */
const RETRY = `excluded.attempt > ${RUNS}.attempt`;

/**
 * The starts of any number of runs, one array per column: one prepared statement, whatever the
 * batch's size. It answers the workflow_ids it wrote; a start it does not answer was refused and
 * changed nothing. A start is taken only onto a row of its organization, and only when it is
 * that run's: of the row's execution chain (the API and the workflow both write each start), or
 * naming no chain (a request that found the run started already) and no newer attempt, or taking
 * the row over. A start takes it over as the run's retry (the attempt after the row's, once that
 * one has ended: it re-opens the run for its chain), or as the first to name the chain of a row
 * registered without one. The run's own starts are written as an update to the values the row
 * has, not skipped, so that the answer alone tells them from refused ones: reading the rows in
 * the statement would take a join whose generic plan, made while the table was small, scans it.
 */
const PROJECT_RUNS_STARTED = `
  insert into ${RUNS} (workflow_id, organization_uuid, workflow_type, version, state_name, status, attempt, created_at, updated_at, schedule_id, end_user_uuid, client_uuid, first_execution_run_id)
  select workflow_id, organization_uuid, workflow_type, version, state_name, 'RUNNING', attempt, at, at, schedule_id, end_user_uuid, client_uuid, first_execution_run_id
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::timestamptz[], $8::text[], $9::text[], $10::text[], $11::text[])
    as started(workflow_id, organization_uuid, workflow_type, version, state_name, attempt, at, schedule_id, end_user_uuid, client_uuid, first_execution_run_id)
  on conflict (workflow_id) do update
  set status = case when ${RETRY} then 'RUNNING' else ${RUNS}.status end,
    is_terminal = ${RUNS}.is_terminal and not ${RETRY},
    state_name = case when ${RETRY} then excluded.state_name else ${RUNS}.state_name end,
    state_data = case when ${RETRY} then null else ${RUNS}.state_data end,
    attempt = greatest(${RUNS}.attempt, excluded.attempt),
    updated_at = case when ${RETRY} then excluded.updated_at else ${RUNS}.updated_at end,
    first_execution_run_id = coalesce(excluded.first_execution_run_id, ${RUNS}.first_execution_run_id)
  where ${RUNS}.organization_uuid = excluded.organization_uuid and (
    ${RUNS}.first_execution_run_id = excluded.first_execution_run_id
    or (excluded.first_execution_run_id is null and excluded.attempt <= ${RUNS}.attempt)
    or (excluded.first_execution_run_id is not null and (
      (${RUNS}.is_terminal and excluded.attempt = ${RUNS}.attempt + 1)
      or (${RUNS}.first_execution_run_id is null and ${RUNS}.last_seq = 0 and ${RUNS}.attempt = excluded.attempt))))
  returning workflow_id`;

/**
 * Writes the starts of several runs with PROJECT_RUNS_STARTED, in one statement; answers the
 * workflow_ids it refused. Each run at most once (Postgres refuses to update one row twice).
 */
async function projectRunsStarted(writeStarts: Statement, events: readonly RunStartedEvent[]): Promise<Set<string>> {
  if (!events.length) return new Set();
  const started = events.map((e) => storable(e));
  const column = <T>(value: (e: RunStartedEvent) => T) => started.map(value);
  const written = await writeStarts([
    column((e) => e.workflow_id),
    column((e) => e.organization_uuid),
    column((e) => e.workflow_type),
    column((e) => e.version),
    column((e) => e.state_name),
    column((e) => e.attempt),
    column((e) => new Date(e.at).toISOString()),
    column((e) => e.schedule_id ?? null),
    column((e) => e.owner?.end_user_uuid ?? null),
    column((e) => e.owner?.client_uuid ?? null),
    column((e) => e.first_execution_run_id ?? null),
  ]);
  const writtenIds = new Set(written.map(([workflowId]) => workflowId));
  return new Set(events.filter((_, i) => !writtenIds.has(started[i].workflow_id)).map((e) => e.workflow_id));
}

/** Why a start or a transition was not written: the workflow id is another run's. Non-retryable. */
export function workflowIdInUseFailure(workflowId: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(workflowIdInUse(workflowId), WORKFLOW_ID_IN_USE);
}

/** Whether writing `a` tells what writing `b` would do: the same run, of the same chain or of one not named. */
function sameRun(a: RunStartedEvent, b: RunStartedEvent): boolean {
  return (
    a.workflow_id === b.workflow_id &&
    a.organization_uuid === b.organization_uuid &&
    (!a.first_execution_run_id || !b.first_execution_run_id || a.first_execution_run_id === b.first_execution_run_id)
  );
}

/**
 * One start per run for a statement: the newest attempt, and of one attempt the start that names
 * its chain. The starts of other runs under a workflow id already there (another organization's,
 * another chain's) are left for statements of their own.
 */
function onePerRun(batch: Waiting[]): { groups: Waiting[][]; apart: Waiting[] } {
  const groups = new Map<string, Waiting[]>();
  const apart: Waiting[] = [];
  for (const w of batch) {
    const group = groups.get(w.event.workflow_id);
    if (!group) groups.set(w.event.workflow_id, [w]);
    else if (!sameRun(group[0].event, w.event)) apart.push(w);
    else if (w.event.attempt > group[0].event.attempt || (w.event.attempt === group[0].event.attempt && !group[0].event.first_execution_run_id)) group.unshift(w);
    else group.push(w);
  }
  return { groups: [...groups.values()], apart };
}

interface Waiting {
  event: RunStartedEvent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** How many registered starts are remembered, so that the second writer of one start does not write it again. */
const REGISTERED_REMEMBERED = 10_000;

/**
 * Writes the starts of runs, those registered together in one statement (a group commit):
 * a registration arriving while one is being written waits for it, then goes with every other
 * that arrived meanwhile. A lone start is written at once; under load the database does one
 * write per batch instead of one per start. No timer: nothing waits for a batch to fill.
 *
 * Each start has two writers, the API that started the run and the run's workflow, and a start
 * already written (the same attempt or a newer one) changes nothing when written again. Where both
 * writers share this process (`main.js all`, `make up`) and its database handle, the second one
 * waits for the first one's write instead of sending its own: one write per start, not two.
 */
export class RunRegistrations {
  private waiting: Waiting[] = [];
  private writing = false;
  /** workflow_id → the start registered last (being written, or committed) and its write. */
  private readonly registered = new Map<string, { event: RunStartedEvent; written: Promise<void> }>();

  private readonly writeStarts: Statement;

  constructor(db: Database) {
    this.writeStarts = preparedStatement(db, 'engine_project_runs_started', PROJECT_RUNS_STARTED);
  }

  async projectRunStarted(event: RunStartedEvent): Promise<void> {
    const earlier = this.registered.get(event.workflow_id);
    // Only a start of the same run, as new at least, stands for this one; a write that fails leaves the start to this one.
    if (earlier && sameRun(earlier.event, event) && earlier.event.attempt >= event.attempt && (!event.first_execution_run_id || earlier.event.first_execution_run_id)) {
      if (await earlier.written.then(() => true, () => false)) return;
    }
    const written = new Promise<void>((resolve, reject) => {
      this.waiting.push({ event, resolve, reject });
      if (!this.writing) void this.writeAll();
    });
    const entry = { event, written };
    const current = this.registered.get(event.workflow_id);
    if (!current || current.event.attempt <= event.attempt) {
      this.registered.delete(event.workflow_id);
      this.registered.set(event.workflow_id, entry);
      if (this.registered.size > REGISTERED_REMEMBERED) this.registered.delete(this.registered.keys().next().value!);
    }
    try {
      await written;
    } catch (err) {
      if (this.registered.get(event.workflow_id) === entry) this.registered.delete(event.workflow_id);
      throw err;
    }
  }

  private async writeAll() {
    this.writing = true;
    while (this.waiting.length) {
      const batch = this.waiting;
      this.waiting = [];
      await this.write(batch);
    }
    this.writing = false;
  }

  /**
   * A batch the database refuses for its data is written again run by run, so that only the
   * start at fault fails; any other error (the database gone) is every caller's answer at once.
   * A refused start fails its callers with workflow_id_in_use.
   */
  private async write(batch: Waiting[]) {
    const { groups, apart } = onePerRun(batch);
    try {
      const refused = await projectRunsStarted(this.writeStarts, groups.map(([first]) => first.event));
      for (const group of groups) settle(group, refused);
    } catch (err) {
      if (groups.length === 1 || !isRefusedData(err)) {
        for (const group of groups) for (const w of group) w.reject(err);
      } else {
        for (const group of groups) {
          await projectRunsStarted(this.writeStarts, [group[0].event]).then(
            (refused) => settle(group, refused),
            (e: unknown) => group.forEach((w) => w.reject(e)),
          );
        }
      }
    }
    for (const w of apart) await this.write([w]);
  }
}

/** Answers the callers of one run's start: written, or refused as another run's workflow id. */
function settle(group: Waiting[], refused: Set<string>) {
  const { workflow_id } = group[0].event;
  for (const w of group) {
    if (refused.has(workflow_id)) w.reject(workflowIdInUseFailure(workflow_id));
    else w.resolve();
  }
}

const shared = new WeakMap<Database, RunRegistrations>();

/** The registrations of one database handle, shared by the API and the worker that use it. */
export function registrationsOf(db: Database): RunRegistrations {
  let registrations = shared.get(db);
  if (!registrations) {
    registrations = new RunRegistrations(db);
    shared.set(db, registrations);
  }
  return registrations;
}
