import { CancellationScope, patched } from '@temporalio/workflow';
import { z } from 'zod';
import type { DbhostActivities } from '../activities/dbhost';
import { dbhostActivityOptions, dbhostConnection, dbhostPrerequisites, failedAction, providerId } from './dbhost/common';
import { ANY_STATE, defineWorkflow, failureFields, type RunData, type StepContext } from './runtime/definition';
import { providerActivities } from './runtime/provider-activities';
import { writeAhead } from './runtime/write-ahead';

const dbhost = providerActivities<DbhostActivities>(dbhostActivityOptions);

export const TIMEOUT_SECONDS = { default: 120, cap: 600 } as const;
export const POLL_INTERVAL = { default: 5, cap: 30 } as const;

/**
 * A read still running at the deadline is cut there; executions recorded before let it run out
 * the provider's budget (up to 4 time-outs of PROVIDER_TIMEOUT_MS plus backoff) past the deadline.
 */
const PATCH_READ_BY_DEADLINE = 'dbhost-wait-read-by-deadline';

/**
 * What a read gets when it starts at or near the deadline: the last poll is scheduled at the
 * deadline itself, and a retry's one read comes after it, so each still has a moment to find the
 * operation finished.
 */
export const READ_GRACE_SECONDS = 3;

const capped = (field: string, limits: { default: number; cap: number }, description: string) =>
  z
    .int({ error: `must be a whole number of seconds` })
    .min(1, { error: 'must be at least 1' })
    .max(limits.cap, { error: `must be at most ${limits.cap} (the cap of ${field})` })
    .default(limits.default)
    .describe(`${description}; default ${limits.default}, cap ${limits.cap}`);

const input = z.strictObject({
  connection_uuid: dbhostConnection,
  dbhost_project_id: providerId('Provider project id'),
  dbhost_operation_id: providerId('Operation to wait on'),
  timeout_seconds: capped('timeout_seconds', TIMEOUT_SECONDS, 'Seconds to wait, from the run\'s start, before failing'),
  poll_interval: capped('poll_interval', POLL_INTERVAL, 'Seconds between polls'),
});

type Input = z.output<typeof input>;
type Data = Input & { poll_count: number; started_at_epoch: number; operation_status?: string };

const output = z.object({
  connection_uuid: z.string(),
  dbhost_project_id: z.string(),
  dbhost_operation_id: z.string(),
  timeout_seconds: z.number().int(),
  poll_interval: z.number().int(),
  operation_status: z.string().optional().describe('The last status read: finished (or skipped) on success'),
  poll_count: z.number().int().optional().describe('Number of polls that read the operation'),
  started_at_epoch: z.number().int().optional().describe('Start of the wait (workflow time, epoch seconds); the deadline counts from it'),
  ...failureFields,
  ...failedAction,
});

/** The provider's operation statuses (scheduling, running, cancelling and unknown ones keep the wait going). */
const SUCCEEDED = new Set(['finished', 'skipped']);
const FAILED = new Set(['failed', 'error', 'cancelled']);

const nowSeconds = (ctx: StepContext) => ctx.now().getTime() / 1000;

/** Seconds until the next poll: poll_interval, but never past the deadline (at least 1 s). */
function nextDelay(d: Data, now: number): number {
  const left = Math.ceil(d.started_at_epoch + d.timeout_seconds - now);
  return Math.max(1, Math.min(d.poll_interval, left));
}

/**
 * The read, or undefined when the deadline (at least READ_GRACE_SECONDS away) passed first: the
 * activity is cancelled, which aborts its HTTP request, and the wait times out like any other.
 * A cancel of the run itself still ends it as cancelled.
 */
async function readByDeadline<T>(read: () => Promise<T>, d: Data, now: number): Promise<T | undefined> {
  // A retry's start is still pending here: written now, or the deadline's timer and the read
  // would each write it.
  await writeAhead.write();
  const seconds = Math.max(READ_GRACE_SECONDS, d.started_at_epoch + d.timeout_seconds - now);
  const scope = new CancellationScope({ cancellable: true, timeout: Math.ceil(seconds * 1000) });
  try {
    return await scope.run(read);
  } catch (err) {
    if (scope.consideredCancelled && !CancellationScope.current().consideredCancelled) return undefined;
    throw err;
  }
}

/**
 * Waits for a database-host operation: GET {dbhost_api}/api/v2/projects/{dbhost_project_id}/operations/{dbhost_operation_id}
 * every poll_interval seconds, on durable timers, until it ends or timeout_seconds have passed.
 *
 * Each poll decides in this order: finished → finish; failed or error → timeout (failure_reason names
 * the status); elapsed ≥ timeout_seconds → timeout; otherwise poll again after poll_interval.
 *
 * Choices where the specification is silent:
 * - The provider's two other terminal statuses are not polled until the deadline: `cancelled` fails
 *   the run like failed/error (failure_type operation_cancelled); `skipped` completes it with
 *   operation_status `skipped` (the provider decided the operation had nothing to do: nothing failed,
 *   and a caller that must tell it apart reads operation_status).
 * - The first poll comes poll_interval seconds after start, like every poll; a poll is never scheduled
 *   past the deadline (its delay is cut to the seconds left), so a run fails on time even when
 *   timeout_seconds is not a multiple of poll_interval. A read that has not answered by the deadline
 *   (READ_GRACE_SECONDS for one started at it) is abandoned and the run times out: a hanging or
 *   retried provider call cannot hold the run past its deadline.
 * - The deadline belongs to the run, not to an attempt: elapsed counts from started_at_epoch (workflow
 *   time of the first start, kept across continue-as-new, worker restarts and retries). A retry
 *   re-drives `poll` at once, so retrying a timed-out run reads the operation once more: it completes
 *   if the operation has finished since, and fails again at once otherwise. To wait longer, start a new run.
 * - poll_count counts the polls that read the operation; a poll whose read fails (401, 404, 5xx after
 *   retries, a connection that does not resolve) ends the run through `fail` with failed_action `poll`.
 */
export const operationsWait = defineWorkflow({
  workflow_type: 'dbhost.operations.wait',
  version: '1.0',
  kind: 'Linear',
  description: 'Polls a database-host operation until it finishes, fails or times out',
  input,
  output,
  states: {
    pending: { initial: true, auto_advance: 'start' },
    waiting_for_operation: { retry_action: 'poll' },
    completed: { terminal: true, success: true },
    failed: { terminal: true },
  },
  transitions: [
    { from: 'pending', action: 'start', to: 'waiting_for_operation' },
    { from: 'waiting_for_operation', action: 'poll', to: 'waiting_for_operation' },
    { from: 'waiting_for_operation', action: 'finish', to: 'completed' },
    { from: 'waiting_for_operation', action: 'timeout', to: 'failed' },
    { from: ANY_STATE, action: 'fail', to: 'failed' },
  ],
  exposed_to_end_users: false,
  prerequisites: dbhostPrerequisites,
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_action',
  actions: {
    async start(data, ctx) {
      const d = { ...(data as Data), poll_count: 0, started_at_epoch: Math.floor(nowSeconds(ctx)) };
      return {
        patch: { poll_count: d.poll_count, started_at_epoch: d.started_at_epoch },
        schedule: { action: 'poll', delay_seconds: nextDelay(d, nowSeconds(ctx)) },
      };
    },

    async poll(data, ctx) {
      const d = data as Data;
      const read = () =>
        dbhost.dbhostGetOperation({
          organization_uuid: ctx.organization_uuid,
          connection_uuid: d.connection_uuid,
          dbhost_project_id: d.dbhost_project_id,
          dbhost_operation_id: d.dbhost_operation_id,
        });
      const answer = patched(PATCH_READ_BY_DEADLINE) ? await readByDeadline(read, d, nowSeconds(ctx)) : await read();
      if (!answer) return { schedule: { action: 'timeout', delay_seconds: 0 } };
      const { status } = answer;
      const patch: RunData = { poll_count: d.poll_count + 1, operation_status: status };
      const now = nowSeconds(ctx);
      if (SUCCEEDED.has(status)) return { patch, schedule: { action: 'finish', delay_seconds: 0 } };
      if (FAILED.has(status)) return { patch, schedule: { action: 'timeout', delay_seconds: 0 } };
      if (now - d.started_at_epoch >= d.timeout_seconds) return { patch, schedule: { action: 'timeout', delay_seconds: 0 } };
      return { patch, schedule: { action: 'poll', delay_seconds: nextDelay(d, now) } };
    },

    async finish() {
      return {};
    },

    /** Records why the wait failed: the operation's own status, else the deadline. */
    async timeout(data, ctx) {
      const d = data as Data;
      const status = d.operation_status ?? 'unknown';
      const operation = `operation ${d.dbhost_operation_id} of project ${d.dbhost_project_id}`;
      const byStatus = FAILED.has(status);
      const elapsed = Math.floor(nowSeconds(ctx) - d.started_at_epoch);
      const reason = byStatus
        ? `database-host ${operation} ended with status ${status}`
        : `database-host ${operation} still ${status} after ${elapsed} s: timeout_seconds (${d.timeout_seconds}) reached`;
      const type = byStatus ? `operation_${status}` : 'timeout';
      return {
        patch: {
          failure_reason: reason,
          failure_type: type,
          failed_step: 'timeout',
          failed_layer: byStatus ? 'provider' : 'engine',
          failed_at_state: ctx.state,
          error: reason,
          error_type: type,
          failed_action: 'timeout',
        },
      };
    },
  },
});
