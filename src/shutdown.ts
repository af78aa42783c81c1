/**
 * How long a SIGTERM may take. Within `graceMs` in-flight activities may finish; then they are
 * cancelled and get `WORKER_FORCE_AFTER_GRACE_MS` to wind down before the worker abandons them
 * (Temporal retries their attempt elsewhere). Whatever still holds the process after that (a
 * projection write to a database that does not answer, a connection that stays open) does not
 * hold it past `exitAfterMs`: the process exits anyway.
 */
export const WORKER_FORCE_AFTER_GRACE_MS = 1_000;
export const EXIT_AFTER_GRACE_MS = 3_000;

export const shutdownBounds = (graceMs: number) => ({
  workerForceMs: graceMs + WORKER_FORCE_AFTER_GRACE_MS,
  exitAfterMs: graceMs + EXIT_AFTER_GRACE_MS,
});
