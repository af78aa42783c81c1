import { type ActivityOptions, patched, proxyActivities } from '@temporalio/workflow';

/**
 * Provider calls are retried by Temporal without an attempt limit: an attempt lost with its
 * worker (heartbeat time-out, shutdown) is simply tried again. The limit that fails a run is the
 * provider's own failures, counted by the activity across attempts (activities/provider-attempts.ts).
 * The activity heartbeats every second while it waits, so a lost attempt is noticed within 5 s.
 */
export function providerActivityOptions(startToCloseTimeout: `${number}s`) {
  return {
    startToCloseTimeout,
    heartbeatTimeout: '5s',
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
  } as const satisfies ActivityOptions;
}

const PATCH_PROVIDER_BUDGET = 'provider-call-budget';

/** Runs recorded before the budget scheduled their provider calls with at most 4 attempts. */
const LEGACY_MAXIMUM_ATTEMPTS = 4;

/**
 * The activities of a provider, scheduled with `options`; executions recorded before the budget
 * replay with the retry policy they were scheduled with.
 */
export function providerActivities<A extends object>(options: ReturnType<typeof providerActivityOptions>): A {
  const budgeted = proxyActivities<A>(options);
  const legacy = proxyActivities<A>({ ...options, retry: { ...options.retry, maximumAttempts: LEGACY_MAXIMUM_ATTEMPTS } });
  return new Proxy({} as A, {
    get: (_target, name) => (patched(PATCH_PROVIDER_BUDGET) ? budgeted : legacy)[name as keyof A],
  });
}
