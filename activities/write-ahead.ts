import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { PROJECTION_REJECTED, type ProjectionActivities, WORKFLOW_ID_IN_USE } from '../workflows/runtime/contract';
import { type CarriedWrites, TRANSITION_NOT_WRITTEN, WRITE_AHEAD_HEADER, type WriteAheadSinks } from '../workflows/runtime/write-ahead';

/** Past this, a write gives up and the workflow writes the transition itself, retrying without limit. */
const WRITE_AHEAD_TIMEOUT_MS = 5_000;
/** How long a write started early waits for its activity, which may have gone to another worker. */
const EARLY_WRITE_KEPT_MS = 30_000;
/** How many committed writes this process remembers, so that an activity's retries do not write them again. */
const WRITTEN_REMEMBERED = 10_000;

export interface TransitionWriter {
  /** Register on the worker: starts writing what was handed off as soon as its workflow task completes. */
  sinks: InjectedSinks<WriteAheadSinks>;
  /** Register on the worker: writes what the activity carries before it runs. */
  interceptor: ActivityInterceptorsFactory;
}

/**
 * The worker's half of workflows/runtime/write-ahead.ts: an activity that carries its run's start
 * or last transition writes them, in that order, before it runs. The write starts when the workflow hands the transition
 * off (a sink, while Temporal dispatches the activity) and the activity waits for it, or writes
 * it itself when this process did not start it (another worker, a replay). A write that fails or
 * hangs fails the activity at once, without running it and without a retry, so a database outage
 * never uses up the activity's attempts: the workflow then writes the transition through its
 * local activity and schedules the activity again. A retry of an activity whose writes this process
 * saw committed runs without writing them again: a database outage between a provider's failure
 * and the retry does not reschedule the activity, whose retries would then count from 1 again.
 * Every worker that runs the engine's workflows with their interceptors registers both halves
 * (src/worker/worker.ts does).
 */
export function transitionWriter(projection: ProjectionActivities): TransitionWriter {
  const early = new Map<string, Promise<void>>();
  const written = new Set<string>();
  const writeAll = async (writes: CarriedWrites) => {
    if (writes.started) await projection.projectRunStarted(writes.started);
    if (writes.transition) await projection.projectTransition(writes.transition);
    written.add(keyOf(writes));
    if (written.size > WRITTEN_REMEMBERED) written.delete(written.values().next().value!);
  };
  return {
    sinks: {
      transitions: {
        handedOff: {
          fn(_info, writes) {
            const key = keyOf(writes);
            if (early.has(key)) return;
            // After this activation's completion is on its way to Temporal: PGlite writes on this thread.
            const write = new Promise<void>((resolve) => setImmediate(resolve)).then(() => writeAll(writes));
            early.set(key, write);
            const forget = () => setTimeout(() => early.get(key) === write && early.delete(key), EARLY_WRITE_KEPT_MS).unref();
            write.then(forget, forget);
          },
        },
      },
    },
    interceptor: (ctx) => ({
      inbound: {
        async execute(input, next) {
          const header = input.headers[WRITE_AHEAD_HEADER];
          if (!header) return next(input);
          const writes = input.args.at(-1) as CarriedWrites;
          const key = keyOf(writes);
          const args = input.args.slice(0, -1);
          const begun = early.get(key);
          early.delete(key);
          if (written.has(key)) return next({ ...input, args });
          const limitMs = Math.min(WRITE_AHEAD_TIMEOUT_MS, (ctx.info.startToCloseTimeoutMs ?? Infinity) / 2);
          const timer = new AbortController();
          const timedOut = delay(limitMs, TIMED_OUT, { signal: timer.signal });
          try {
            const write = begun ? begun.catch(() => writeAll(writes)) : writeAll(writes);
            const outcome = await Promise.race([write, timedOut]);
            if (outcome === TIMED_OUT) throw new WriteTimedOut(`no answer in ${limitMs} ms`);
          } catch (err) {
            throw ApplicationFailure.create({
              type: TRANSITION_NOT_WRITTEN,
              nonRetryable: true,
              message: `${describe(defaultPayloadConverter.fromPayload<string>(header))} not written before the activity: ${reasonOf(err)}`,
            });
          } finally {
            timer.abort();
          }
          return next({ ...input, args });
        },
      },
    }),
  };
}

/** Per execution chain: another run under the same workflow id (refused by the projection) is not this one. */
function keyOf({ started, transition }: CarriedWrites): string {
  const run = started ?? transition;
  return `${run?.workflow_id}:${run?.first_execution_run_id ?? ''}:${run?.attempt}:${started ? 'start' : ''}:${transition?.seq ?? ''}`;
}

/** `start+3` → "the run's start and transition 3". */
function describe(names: string): string {
  return names
    .split('+')
    .map((name) => (name === 'start' ? "the run's start" : `transition ${name}`))
    .join(' and ');
}

const TIMED_OUT = Symbol('timed out');
class WriteTimedOut extends Error {}

/**
 * What is safe to store in clear: the projection's refusals name only the SQLSTATE or the workflow
 * id, and the database's own messages may quote the values, so other errors give only their code.
 */
function reasonOf(err: unknown): string {
  if (err instanceof ApplicationFailure && (err.type === PROJECTION_REJECTED || err.type === WORKFLOW_ID_IN_USE)) return err.message;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return err instanceof WriteTimedOut ? err.message : 'the write failed';
}
