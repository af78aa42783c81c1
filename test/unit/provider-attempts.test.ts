import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterProviderFailure, type AttemptRecord, budgetSpent, PROVIDER_FAILURE_BUDGET, startAttempt } from '../../activities/provider-attempts';
import { callProvider, type ProviderRequest } from '../../activities/provider-http';
import { dispatcherFor } from '../support/outbound';

describe('provider call budget: the record carried between attempts', () => {
  const fresh: AttemptRecord = { provider_failures: 0, recorded_attempt: 0, outcome_unknown: false };

  it('starts the first attempt fresh, whatever the details', () => {
    expect(startAttempt(undefined, 1)).toEqual(fresh);
    expect(startAttempt({ nonsense: true }, 1)).toEqual(fresh);
  });

  it('counts only recorded provider failures, however many attempts were lost', () => {
    let record = startAttempt(undefined, 1);
    record = afterProviderFailure(record, 1, true);
    // Attempts 2 to 9 lost with their workers: each heartbeats the record unchanged.
    for (let attempt = 2; attempt <= 9; attempt++) record = startAttempt(record, attempt);
    expect(record.provider_failures).toBe(1);
    expect(budgetSpent(record)).toBe(false);
  });

  it('is spent by the budget-th provider failure, not before', () => {
    let record = startAttempt(undefined, 1);
    for (let attempt = 1; attempt <= PROVIDER_FAILURE_BUDGET; attempt++) {
      record = afterProviderFailure(startAttempt(record, attempt), attempt, true);
      expect(budgetSpent(record)).toBe(attempt === PROVIDER_FAILURE_BUDGET);
    }
  });

  it('knows the outcome of earlier attempts only while each one recorded an answer', () => {
    const answered = afterProviderFailure(startAttempt(undefined, 1), 1, true);
    expect(startAttempt(answered, 2).outcome_unknown).toBe(false);
    // Attempt 2 left nothing (lost), so on attempt 3 its outcome is unknown …
    expect(startAttempt(answered, 3).outcome_unknown).toBe(true);
    // … and stays unknown after attempt 3 records an answer of its own.
    const third = afterProviderFailure(startAttempt(answered, 3), 3, true);
    expect(startAttempt(third, 4).outcome_unknown).toBe(true);
  });

  it('treats a call that got no answer (time-out, network) as an unknown outcome', () => {
    const timedOut = afterProviderFailure(startAttempt(undefined, 1), 1, false);
    expect(timedOut.provider_failures).toBe(1);
    expect(startAttempt(timedOut, 2).outcome_unknown).toBe(true);
  });
});

describe('provider call budget in callProvider (activity context)', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/gone') return res.writeHead(404, { 'content-type': 'application/json' }).end('{"errorCode":"RESOURCE_NOT_FOUND","message":"gone"}');
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const config = () => ({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 2_000, dispatcher: dispatcherFor([base]) });
  const request = (method: string, path: string): ProviderRequest => ({ method, url: base + path, provider: 'test provider' });

  /** Runs one attempt as Temporal would, with the details an earlier attempt left; returns the outcome and the last heartbeat. */
  async function attempt(n: number, details: AttemptRecord | undefined, req: ProviderRequest) {
    const env = new MockActivityEnvironment({ attempt: n, heartbeatDetails: details });
    let heartbeat: AttemptRecord | undefined;
    env.on('heartbeat', (d: AttemptRecord) => (heartbeat = d));
    const outcome = await env.run(() => callProvider(config(), req)).catch((e: unknown) => e);
    return { outcome, heartbeat };
  }

  it('a 5xx records itself and stays retryable until the budget-th, which is final', async () => {
    let details: AttemptRecord | undefined;
    for (let n = 1; n <= PROVIDER_FAILURE_BUDGET; n++) {
      const { outcome, heartbeat } = await attempt(n, details, request('GET', '/busy'));
      expect(outcome).toBeInstanceOf(ApplicationFailure);
      const failure = outcome as ApplicationFailure;
      expect(failure.type).toBe('server_error');
      expect(failure.nonRetryable).toBe(n === PROVIDER_FAILURE_BUDGET);
      expect(failure.details).toEqual([{ status_code: 503, response: { message: 'busy' } }]);
      expect(heartbeat).toEqual({ provider_failures: n, recorded_attempt: n, outcome_unknown: false });
      details = heartbeat;
    }
  });

  it('lost attempts between 5xx answers do not spend the budget', async () => {
    const first = await attempt(1, undefined, request('GET', '/busy'));
    // Attempts 2..7 lost: the server keeps attempt 1's details.
    const eighth = await attempt(8, first.heartbeat, request('GET', '/busy'));
    expect((eighth.outcome as ApplicationFailure).nonRetryable).toBe(false);
    expect(eighth.heartbeat?.provider_failures).toBe(2);
  });

  it('a DELETE answered 404 after a lost attempt completes with already_absent', async () => {
    const { outcome } = await attempt(2, undefined, request('DELETE', '/gone'));
    expect(outcome).toEqual({ status_code: 404, response: { errorCode: 'RESOURCE_NOT_FOUND', message: 'gone' }, already_absent: true });
  });

  it('a DELETE answered 404 on its first attempt, or after a recorded answer, still fails not_found', async () => {
    for (const [n, details] of [
      [1, undefined],
      [2, { provider_failures: 1, recorded_attempt: 1, outcome_unknown: false }],
    ] as const) {
      const { outcome } = await attempt(n, details, request('DELETE', '/gone'));
      expect(outcome).toBeInstanceOf(ApplicationFailure);
      expect((outcome as ApplicationFailure).type).toBe('not_found');
      expect((outcome as ApplicationFailure).nonRetryable).toBe(true);
    }
  });

  it('a GET answered 404 after a lost attempt still fails not_found', async () => {
    const { outcome } = await attempt(3, undefined, request('GET', '/gone'));
    expect((outcome as ApplicationFailure).type).toBe('not_found');
  });
});
