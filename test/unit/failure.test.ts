import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { classifyFailure, StepFailure } from '../../workflows/runtime/failure';
import { redact } from '../../workflows/runtime/redact';

const activityFailure = (cause: Error) =>
  new ActivityFailure('activity failed', 'esignRequest', '1', RetryState.NON_RETRYABLE_FAILURE, 'identity', cause);

describe('classifyFailure', () => {
  it('keeps a provider answer carried in an ApplicationFailure detail', () => {
    const cause = ApplicationFailure.nonRetryable('e-signature API answered HTTP 401: USER_AUTHENTICATION_FAILED: bad token', 'unauthorized', {
      status_code: 401,
      response: { errorCode: 'USER_AUTHENTICATION_FAILED', message: 'bad token' },
    });
    const result = classifyFailure(activityFailure(cause), 'pending', 'execute');
    expect(result.fields).toEqual({
      failure_reason: 'e-signature API answered HTTP 401: USER_AUTHENTICATION_FAILED: bad token',
      failure_type: 'unauthorized',
      failed_step: 'execute',
      failed_layer: 'activity',
      failed_at_state: 'pending',
      error: 'e-signature API answered HTTP 401: USER_AUTHENTICATION_FAILED: bad token',
      error_type: 'unauthorized',
    });
    expect(result.patch).toEqual({ status_code: 401, response: { errorCode: 'USER_AUTHENTICATION_FAILED', message: 'bad token' } });
  });

  it('names activity time-outs', () => {
    const result = classifyFailure(activityFailure(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)), 'pending', 'execute');
    expect(result.fields.failure_type).toBe('timeout');
    expect(result.fields.failure_reason).toContain('esignRequest timed out');
  });

  it('uses a StepFailure as decided by the handler', () => {
    const result = classifyFailure(new StepFailure('operation failed', 'operation_failed', 'provider', { operation_status: 'failed' }), 'waiting', 'poll');
    expect(result.fields).toMatchObject({ failure_type: 'operation_failed', failed_layer: 'provider', failed_at_state: 'waiting', failed_step: 'poll' });
    expect(result.patch).toEqual({ operation_status: 'failed' });
  });

  it('reports anything else as an internal engine error', () => {
    const result = classifyFailure(new TypeError('x is undefined'), 'pending', 'execute');
    expect(result.fields).toMatchObject({ failure_type: 'internal_error', failed_layer: 'engine', error_type: 'TypeError', error: 'x is undefined' });
  });
});

describe('redact', () => {
  it('replaces present secret fields and leaves the rest', () => {
    expect(redact({ api_token: 's3cret', base_url: 'https://x/api' }, ['api_token'])).toEqual({ api_token: '[redacted]', base_url: 'https://x/api' });
    expect(redact({ base_url: 'https://x/api' }, ['api_token'])).toEqual({ base_url: 'https://x/api' });
  });

  it('does not mutate its input', () => {
    const data = { api_token: 's3cret' };
    redact(data, ['api_token']);
    expect(data.api_token).toBe('s3cret');
  });
});
