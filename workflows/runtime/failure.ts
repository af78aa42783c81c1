import { ActivityFailure, ApplicationFailure, TemporalFailure, TimeoutFailure } from '@temporalio/common';
import { PROJECTION_REJECTED } from './contract';
import type { RunData } from './definition';

/**
 * Thrown by an action handler that has decided the run must fail. `patch` keeps
 * what was learned before failing (a provider's status code and body, say).
 */
export class StepFailure extends Error {
  constructor(
    message: string,
    readonly failureType: string,
    /** A string for Atomic and Linear types; a Dag names the failed layer as JSON. */
    readonly layer: string | RunData,
    readonly patch: RunData = {},
    readonly options: StepFailureOptions = {},
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

export interface StepFailureOptions {
  /** failed_step when it is not the action (a Dag's step name). */
  step?: string;
  /** No retry may re-drive the run (a Dag whose completed layers were compensated). */
  final?: boolean;
}

export interface FailureFields {
  failure_reason: string;
  failure_type: string;
  failed_step: string;
  failed_layer: string | RunData;
  failed_at_state: string;
  error: string;
  error_type: string;
}

export interface ClassifiedFailure {
  fields: FailureFields;
  patch: RunData;
  final?: boolean;
}

/**
 * Turns whatever a handler threw into the failure fields. Activities report
 * provider outcomes as ApplicationFailures whose first detail is a patch of
 * run data (status_code, response), so the failed run still shows them.
 */
export function classifyFailure(err: unknown, state: string, action: string): ClassifiedFailure {
  const base = { failed_step: action, failed_at_state: state };
  if (err instanceof StepFailure) {
    return {
      fields: {
        ...base,
        failed_step: err.options.step ?? action,
        failure_reason: err.message,
        failure_type: err.failureType,
        failed_layer: err.layer,
        error: err.message,
        error_type: err.failureType,
      },
      patch: err.patch,
      final: err.options.final,
    };
  }
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      const detail = cause.details?.[0];
      const patch = detail && typeof detail === 'object' ? (detail as RunData) : {};
      const type = cause.type ?? 'activity_error';
      return {
        fields: {
          ...base,
          failure_reason: cause.message,
          failure_type: type,
          failed_layer: 'activity',
          error: cause.message,
          error_type: type,
        },
        patch,
      };
    }
    if (cause instanceof TimeoutFailure) {
      const reason = `activity ${err.activityType} timed out (${cause.timeoutType})`;
      return {
        fields: { ...base, failure_reason: reason, failure_type: 'timeout', failed_layer: 'activity', error: reason, error_type: 'TimeoutFailure' },
        patch: {},
      };
    }
    const reason = cause?.message ?? err.message;
    return {
      fields: { ...base, failure_reason: reason, failure_type: 'activity_error', failed_layer: 'activity', error: reason, error_type: cause?.name ?? 'ActivityFailure' },
      patch: {},
    };
  }
  const message = messageOf(err);
  const name = err instanceof TemporalFailure || err instanceof Error ? err.name : 'Error';
  return {
    fields: { ...base, failure_reason: message, failure_type: 'internal_error', failed_layer: 'engine', error: message, error_type: name },
    patch: {},
  };
}

/**
 * The failure a projection write becomes when the database refused its data for good, or
 * undefined for any other error. A local activity's failure reaches the workflow as the
 * activity's own ApplicationFailure, not wrapped in an ActivityFailure.
 */
export function projectionRejection(err: unknown): StepFailure | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  if (!(failure instanceof ApplicationFailure) || failure.type !== PROJECTION_REJECTED) return undefined;
  return new StepFailure(failure.message, PROJECTION_REJECTED, 'projection');
}

/** A thrown value as text, even one whose conversion throws (a broken toString, no prototype): classifying must not throw. */
function messageOf(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    return Object.prototype.toString.call(err);
  }
}
