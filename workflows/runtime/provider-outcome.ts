import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/common';

/**
 * Whether a provider call may have acted at the provider with no answer recorded, as its final
 * failure tells the workflow. Within one execution the activity's heartbeat details carry this
 * from attempt to attempt (activities/provider-attempts.ts); a run-level retry is a new execution
 * with none, so the workflow keeps it for the retry (esign-delete-user-authorization.ts).
 */
const OUTCOME_UNKNOWN = { outcome_unknown: true } as const;

/**
 * The same failure, saying that some attempt's outcome is unknown. details[0] stays the run data
 * the failure keeps (classifyFailure reads only that one); the mark comes after it.
 */
export function withOutcomeUnknown(failure: ApplicationFailure): ApplicationFailure {
  return ApplicationFailure.create({
    message: failure.message,
    type: failure.type ?? undefined,
    nonRetryable: failure.nonRetryable ?? undefined,
    details: [failure.details?.[0] ?? {}, OUTCOME_UNKNOWN],
    nextRetryDelay: failure.nextRetryDelay ?? undefined,
    category: failure.category ?? undefined,
    cause: failure.cause,
  });
}

/**
 * What a failed provider activity leaves unknown: its own mark, a Temporal time-out (an attempt
 * that never reported), or a cancellation, which abandons the call in flight or before it was
 * sent. The workflow cannot tell those two apart, so it assumes the call was made: at worst a 404
 * that would have failed not_found completes already_absent, the resource absent either way.
 */
export function providerOutcomeUnknown(err: unknown): boolean {
  if (err instanceof CancelledFailure) return true;
  if (!(err instanceof ActivityFailure)) return false;
  const cause = err.cause;
  if (cause instanceof CancelledFailure || cause instanceof TimeoutFailure) return true;
  if (!(cause instanceof ApplicationFailure)) return false;
  return (cause.details ?? []).slice(1).some((d) => (d as { outcome_unknown?: unknown } | null)?.outcome_unknown === true);
}
