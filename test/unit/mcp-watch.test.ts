import type { RunApiClient, StreamEvent } from '../../src/mcp/run-api-client';
import { type StreamTransition, watchRun } from '../../src/mcp/watch';

const t1 = { seq: 1, from: 'PENDING', to: 'EXECUTING', action: 'execute', at: '2026-01-01T00:00:00.000Z' };

/** A client whose stream yields `events`, then hangs until aborted when `hang`; `run` is what GET answers. */
function fakeApi(events: StreamEvent[], options: { hang?: boolean; run?: Record<string, unknown> } = {}) {
  return {
    async *stream(_id: string, signal: AbortSignal) {
      for (const e of events) yield e;
      if (!options.hang) return;
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
    get: async () => options.run,
  } as unknown as RunApiClient;
}

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

  it('a caller that cancels gets the cancellation, not a result', async () => {
    const controller = new AbortController();
    const watching = watchRun(fakeApi([], { hang: true }), 'wf_1', { timeoutMs: 5_000, signal: controller.signal, onTransition: async () => {} });
    controller.abort(new Error('cancelled by the client'));
    await expect(watching).rejects.toThrow('cancelled by the client');
  });
});
