import { type RunApiClient, RunApiError, type StreamEvent } from '../../src/mcp/run-api-client';
import { type StreamTransition, watchRun } from '../../src/mcp/watch';

const t1 = { seq: 1, from: 'PENDING', to: 'EXECUTING', action: 'execute', at: '2026-01-01T00:00:00.000Z' };
const t2 = { seq: 2, from: 'EXECUTING', to: 'COMPLETED', action: 'complete', at: '2026-01-01T00:00:01.000Z' };
const completed: StreamEvent = { event: 'completed', data: { workflow_id: 'wf_1', state_name: 'COMPLETED', state_data: { ok: true } } };

/** One connection: its events, then how it ends (closed by default; `hang` until aborted; or an error thrown). */
interface Connection {
  events?: StreamEvent[];
  end?: 'hang' | Error;
}

/**
 * A client whose nth stream is `connections[n]` (the last one repeats), recording the
 * Last-Event-ID each was opened with; `run` is what GET answers.
 */
function scriptedApi(connections: Connection[], run?: Record<string, unknown>) {
  const opened: (number | undefined)[] = [];
  const api = {
    async *stream(_id: string, signal: AbortSignal, lastEventId?: number) {
      const connection = connections[Math.min(opened.length, connections.length - 1)];
      opened.push(lastEventId);
      for (const e of connection.events ?? []) yield e;
      if (connection.end instanceof Error) throw connection.end;
      if (connection.end !== 'hang') return;
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
    get: async () => run,
  } as unknown as RunApiClient;
  return { api, opened };
}

function fakeApi(events: StreamEvent[], options: { hang?: boolean; run?: Record<string, unknown> } = {}) {
  return scriptedApi([{ events, end: options.hang ? 'hang' : undefined }], options.run).api;
}

const dropped = () => new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });

async function watch(api: RunApiClient, timeoutMs = 5_000) {
  const seen: StreamTransition[] = [];
  const outcome = await watchRun(api, 'wf_1', { timeoutMs, signal: new AbortController().signal, onTransition: async (t) => void seen.push(t) });
  return { outcome, seen };
}

describe('watchRun', () => {
  it('completed: the state_data, every transition passed on', async () => {
    const { outcome, seen } = await watch(
      fakeApi([
        { event: 'transition', data: t1 },
        { event: 'completed', data: { workflow_id: 'wf_1', state_name: 'COMPLETED', state_data: { ok: true } } },
      ]),
    );
    expect(seen).toEqual([t1]);
    expect(outcome).toEqual({ workflow_id: 'wf_1', outcome: 'completed', state_name: 'COMPLETED', transitions: [t1], state_data: { ok: true } });
  });

  it('failed: the error fields and a hint naming retry_workflow and POST retry', async () => {
    const error = { message: 'denied', failure_type: 'unauthorized', failed_step: 'execute' };
    const { outcome } = await watch(
      fakeApi([{ event: 'failed', data: { workflow_id: 'wf_1', state_name: 'FAILED', error, state_data: { failure_reason: 'denied' } } }]),
    );
    expect(outcome).toMatchObject({ outcome: 'failed', state_name: 'FAILED', error });
    expect(outcome.hint).toContain('retry_workflow {"workflow_id": "wf_1"}');
    expect(outcome.hint).toContain('POST /api/workflows/wf_1/retry');
  });

  it('past the time-out: still running, in the state the run reports', async () => {
    const run = { workflow_id: 'wf_1', status: 'RUNNING', state_name: 'EXECUTING' };
    const { outcome } = await watch(fakeApi([{ event: 'transition', data: t1 }], { hang: true, run }), 50);
    expect(outcome).toMatchObject({ outcome: 'running', state_name: 'EXECUTING', transitions: [t1] });
  });

  it('a run that ended as the time-out passed: its outcome from the run, failure fields included', async () => {
    const run = {
      workflow_id: 'wf_1',
      status: 'FAILED',
      state_name: 'FAILED',
      state_data: { failure_reason: 'gone', failure_type: 'not_found', failed_step: 'execute', status_code: 404 },
    };
    const { outcome } = await watch(fakeApi([], { hang: true, run }), 50);
    expect(outcome).toMatchObject({ outcome: 'failed', error: { message: 'gone', failure_type: 'not_found', failed_step: 'execute' } });
    expect(outcome.error).not.toHaveProperty('status_code');
  });

  it('a connection cut mid-run is reopened after the last seq, and a replayed transition is passed on once', async () => {
    const { api, opened } = scriptedApi([
      { events: [{ event: 'transition', data: t1 }], end: dropped() },
      { events: [{ event: 'transition', data: t1 }, { event: 'transition', data: t2 }, completed] },
    ]);
    const { outcome, seen } = await watch(api);
    expect(opened).toEqual([undefined, 1]);
    expect(seen).toEqual([t1, t2]);
    expect(outcome).toMatchObject({ outcome: 'completed', transitions: [t1, t2], state_data: { ok: true } });
  });

  it('a stream the API closes without an end (its process shutting down) is reopened, not reported as running', async () => {
    const { api, opened } = scriptedApi([{ events: [{ event: 'transition', data: t1 }] }, { events: [] }, { events: [completed] }]);
    const { outcome } = await watch(api);
    expect(opened).toEqual([undefined, 1, 1]);
    expect(outcome.outcome).toBe('completed');
  });

  it('a 429 or 503 is retried after its Retry-After; a 404 is the answer', async () => {
    const throttled = new RunApiError(429, 'too_many_streams', 'this token already has 8 open streams', null, 0);
    const { api, opened } = scriptedApi([{ end: throttled }, { end: new RunApiError(503, 'unavailable', 'down', null, 0) }, { events: [completed] }]);
    expect((await watch(api)).outcome.outcome).toBe('completed');
    expect(opened).toHaveLength(3);

    const missing = scriptedApi([{ end: new RunApiError(404, 'not_found', 'no run wf_1', null) }, { events: [completed] }]);
    await expect(watch(missing.api)).rejects.toMatchObject({ status: 404 });
    expect(missing.opened).toHaveLength(1);
  });

  it('a revoked token ends the watch with a 401, without reconnecting', async () => {
    const { api, opened } = scriptedApi([{ events: [{ event: 'revoked', data: { error: { code: 'unauthorized' } } }] }, { events: [completed] }]);
    await expect(watch(api)).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(opened).toHaveLength(1);
  });

  it('an API that stays unreachable: reconnects with a growing pause until the time-out, then the run as it stands', async () => {
    const run = { workflow_id: 'wf_1', status: 'RUNNING', state_name: 'EXECUTING' };
    const { api, opened } = scriptedApi([{ end: new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }) }], run);
    const { outcome } = await watch(api, 1_200);
    expect(outcome).toMatchObject({ outcome: 'running', state_name: 'EXECUTING' });
    // 125–250, 250–500, 500–1000 ms: three or four attempts fit in 1.2 s, not one per tick.
    expect(opened.length).toBeGreaterThanOrEqual(2);
    expect(opened.length).toBeLessThanOrEqual(5);
  });

  it('a caller that cancels gets the cancellation, not a result', async () => {
    const controller = new AbortController();
    const watching = watchRun(fakeApi([], { hang: true }), 'wf_1', { timeoutMs: 5_000, signal: controller.signal, onTransition: async () => {} });
    controller.abort(new Error('cancelled by the client'));
    await expect(watching).rejects.toThrow('cancelled by the client');
  });
});
