import { isDatabaseUnavailable, isTemporalUnavailable } from '../../src/common/unavailable';

describe('telling an unavailable dependency from a bug', () => {
  it('the database: refused, reset, timed out or blackholed connections, also wrapped as a cause', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error('Failed query', { cause: refused }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Query read timeout'))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('the database system is shutting down'), { code: '57P03' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
  });

  it('Temporal: gRPC UNAVAILABLE under the client error, nothing else', () => {
    const grpc = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
    expect(isTemporalUnavailable(new Error('Failed to start Workflow', { cause: grpc }))).toBe(true);
    expect(isTemporalUnavailable(Object.assign(new Error('3 INVALID_ARGUMENT'), { code: 3 }))).toBe(false);
    expect(isTemporalUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(false);
  });
});
