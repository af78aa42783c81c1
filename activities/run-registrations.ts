import { getTableName } from 'drizzle-orm';
import type { Database } from '../db/client';
import { preparedStatement, type Statement } from '../db/prepared-statement';
import { runs } from '../db/schema';
import type { RunStartedEvent } from '../workflows/runtime/contract';
import { storable } from '../workflows/runtime/storable-text';
import { isRefusedData } from './database-errors';

/**
 * The starts of any number of runs, one array per column: one prepared statement, whatever the
 * batch's size. A start already written changes nothing; a newer attempt re-opens its run.
 */
const PROJECT_RUNS_STARTED = `
  insert into "${getTableName(runs)}" (workflow_id, organization_uuid, workflow_type, version, state_name, status, attempt, created_at, updated_at, schedule_id, end_user_uuid, client_uuid)
  select workflow_id, organization_uuid, workflow_type, version, state_name, 'RUNNING', attempt, at, at, schedule_id, end_user_uuid, client_uuid
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::timestamptz[], $8::text[], $9::text[], $10::text[])
    as started(workflow_id, organization_uuid, workflow_type, version, state_name, attempt, at, schedule_id, end_user_uuid, client_uuid)
  on conflict (workflow_id) do update
  set status = 'RUNNING', is_terminal = false, state_name = excluded.state_name, state_data = null, attempt = excluded.attempt, updated_at = excluded.updated_at
  where "${getTableName(runs)}".attempt < excluded.attempt`;

/**
 * Writes the starts of several runs with PROJECT_RUNS_STARTED, in one statement. Each run at most
 * once per statement (Postgres refuses to update one row twice), so a repeated start is left out.
 */
async function projectRunsStarted(writeStarts: Statement, events: readonly RunStartedEvent[]): Promise<void> {
  const latest = new Map<string, RunStartedEvent>();
  for (const event of events) {
    const seen = latest.get(event.workflow_id);
    if (!seen || seen.attempt < event.attempt) latest.set(event.workflow_id, event);
  }
  if (!latest.size) return;
  const started = [...latest.values()].map((e) => storable(e));
  const column = <T>(value: (e: RunStartedEvent) => T) => started.map(value);
  await writeStarts([
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
  ]);
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
  /** workflow_id → the newest attempt registered (being written, or committed) and its write. */
  private readonly registered = new Map<string, { attempt: number; written: Promise<void> }>();

  private readonly writeStarts: Statement;

  constructor(db: Database) {
    this.writeStarts = preparedStatement(db, 'engine_project_runs_started', PROJECT_RUNS_STARTED);
  }

  async projectRunStarted(event: RunStartedEvent): Promise<void> {
    const earlier = this.registered.get(event.workflow_id);
    // A write that fails leaves the start to this one.
    if (earlier && earlier.attempt >= event.attempt && (await earlier.written.then(() => true, () => false))) return;
    const written = new Promise<void>((resolve, reject) => {
      this.waiting.push({ event, resolve, reject });
      if (!this.writing) void this.writeAll();
    });
    const entry = { attempt: event.attempt, written };
    const current = this.registered.get(event.workflow_id);
    if (!current || current.attempt <= event.attempt) {
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
   * A batch the database refuses for its data is written again start by start, so that only the
   * start at fault fails; any other error (the database gone) is every caller's answer at once.
   */
  private async write(batch: Waiting[]) {
    try {
      await projectRunsStarted(this.writeStarts, batch.map((w) => w.event));
      for (const w of batch) w.resolve();
    } catch (err) {
      if (batch.length === 1 || !isRefusedData(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      for (const w of batch) await projectRunsStarted(this.writeStarts, [w.event]).then(w.resolve, w.reject);
    }
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
