import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { classifyFailure } from '../../workflows/runtime/failure';
import { providerOutcomeUnknown, withOutcomeUnknown } from '../../workflows/runtime/provider-outcome';

const fromActivity = (cause: Error) => new ActivityFailure('activity failed', 'esignRequest', '1', RetryState.NON_RETRYABLE_FAILURE, 'identity', cause);

describe('a provider call whose outcome is unknown, as its final failure tells the workflow', () => {
  it('the marked failure is the same failure to classify: message, type, retryability and the run data it keeps', () => {
    const kept = { status_code: 503, response: { errorCode: 'SERVICE_UNAVAILABLE' } };
    const failure = ApplicationFailure.create({ message: 'answered HTTP 503', type: 'server_error', nonRetryable: true, details: [kept] });
    const marked = withOutcomeUnknown(failure);
    expect(marked).toMatchObject({ message: 'answered HTTP 503', type: 'server_error', nonRetryable: true });
    expect(classifyFailure(fromActivity(marked), 'pending', 'execute')).toEqual(classifyFailure(fromActivity(failure), 'pending', 'execute'));
    // A failure that kept no run data keeps none.
    const timeout = withOutcomeUnknown(ApplicationFailure.nonRetryable('did not answer', 'timeout'));
    expect(classifyFailure(fromActivity(timeout), 'pending', 'execute').patch).toEqual({});
  });

  it.each([
    ['a marked provider failure', fromActivity(withOutcomeUnknown(ApplicationFailure.nonRetryable('did not answer', 'timeout'))), true],
    ['the activity cancelled (the run was)', fromActivity(new CancelledFailure('cancelled')), true],
    ['a cancellation thrown as it is', new CancelledFailure('cancelled'), true],
    ['a Temporal time-out of the activity', fromActivity(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)), true],
    ['an answered failure', fromActivity(ApplicationFailure.nonRetryable('answered HTTP 404', 'not_found', { status_code: 404, response: null })), false],
    ['an answered failure whose kept answer merely looks like the mark', fromActivity(ApplicationFailure.nonRetryable('answered HTTP 400', 'client_error', { outcome_unknown: true })), false],
    ['anything else', new Error('boom'), false],
  ])('%s: %s', (_, err, unknown) => {
    expect(providerOutcomeUnknown(err)).toBe(unknown);
  });
});
