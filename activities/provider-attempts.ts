import { Context } from '@temporalio/activity';

/**
 * The retry budget of a provider call, carried from attempt to attempt in the activity's
 * heartbeat details (Temporal hands the last ones recorded to the next attempt). Temporal
 * retries a provider activity without limit, so that an attempt lost with its worker (a
 * heartbeat time-out, a shutdown) costs nothing; the budget is spent only by the provider's
 * own failures, and once spent the activity fails for good.
 */
export const PROVIDER_FAILURE_BUDGET = 4;

/** What an attempt leaves for the next one. Only counts and flags: it sits in Temporal history. */
export interface AttemptRecord {
  /** Provider failures so far: error answers and calls that got no answer (time-out, network). */
  provider_failures: number;
  /** The last attempt that ended with a recorded provider failure; 0 for none. */
  recorded_attempt: number;
  /** Sticky: some earlier attempt may have reached the provider with no answer recorded. */
  outcome_unknown: boolean;
}

const FRESH: AttemptRecord = { provider_failures: 0, recorded_attempt: 0, outcome_unknown: false };

function asRecord(details: unknown): AttemptRecord {
  const d = details as Partial<AttemptRecord> | null | undefined;
  if (!d || typeof d !== 'object' || !Number.isInteger(d.provider_failures) || !Number.isInteger(d.recorded_attempt)) return FRESH;
  return { provider_failures: d.provider_failures!, recorded_attempt: d.recorded_attempt!, outcome_unknown: d.outcome_unknown === true };
}

/**
 * Where attempt `attempt` starts, given the details the previous attempts left. An earlier
 * attempt that recorded nothing ended without saying how: lost with its worker, or done at the
 * provider with its answer lost. Either way what it did at the provider is unknown.
 */
export function startAttempt(details: unknown, attempt: number): AttemptRecord {
  const previous = asRecord(details);
  const lostOne = attempt > 1 && previous.recorded_attempt !== attempt - 1;
  return { ...previous, outcome_unknown: previous.outcome_unknown || lostOne };
}

/** The record after this attempt's provider failure; `answered` is false when no answer came back. */
export function afterProviderFailure(record: AttemptRecord, attempt: number, answered: boolean): AttemptRecord {
  return {
    provider_failures: record.provider_failures + 1,
    recorded_attempt: attempt,
    outcome_unknown: record.outcome_unknown || !answered,
  };
}

export const budgetSpent = (record: AttemptRecord) => record.provider_failures >= PROVIDER_FAILURE_BUDGET;

/** One activity attempt's view of the budget; every heartbeat of the attempt carries its record. */
export class AttemptLedger {
  constructor(
    readonly attempt: number,
    private current: AttemptRecord,
    private readonly context?: Context,
  ) {}

  get record(): AttemptRecord {
    return this.current;
  }

  /** Whether an earlier attempt may have acted at the provider with no answer recorded. */
  get earlierOutcomeUnknown(): boolean {
    return this.current.outcome_unknown;
  }

  /** An earlier execution of this call (the run a retry re-drives) may have acted at the provider unanswered. */
  assumeEarlierOutcomeUnknown(): void {
    this.current = { ...this.current, outcome_unknown: true };
  }

  heartbeat(): void {
    this.context?.heartbeat(this.current);
  }

  /**
   * Counts a provider failure and says whether the budget is now spent. Recorded at once: the
   * SDK flushes an attempt's last heartbeat before it reports the failure.
   */
  providerFailed(answered: boolean): boolean {
    this.current = afterProviderFailure(this.current, this.attempt, answered);
    this.heartbeat();
    return budgetSpent(this.current);
  }
}

const ledgers = new WeakMap<Context, AttemptLedger>();

/** The current attempt's ledger; outside an activity (unit tests) a fresh first attempt. */
export function currentLedger(): AttemptLedger {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return new AttemptLedger(1, FRESH);
  }
  let ledger = ledgers.get(context);
  if (!ledger) {
    const { attempt, heartbeatDetails } = context.info;
    ledger = new AttemptLedger(attempt, startAttempt(heartbeatDetails, attempt), context);
    ledgers.set(context, ledger);
  }
  return ledger;
}
