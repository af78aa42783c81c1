import { setTimeout } from 'node:timers/promises';
import { z } from 'zod';
import { failureFields } from '../../workflows/runtime/definition';
import type { run } from '../openapi/run-schemas';
import { type RunApiClient, RunApiError } from './run-api-client';

export const streamTransition = z.object({ seq: z.int(), from: z.string(), to: z.string(), action: z.string(), at: z.string() });
export type StreamTransition = z.output<typeof streamTransition>;

const failure = z.looseObject({ message: z.string(), ...failureFields });

export const watchOutcome = z.object({
  workflow_id: z.string(),
  outcome: z
    .enum(['completed', 'failed', 'running'])
    .describe('completed: state_data is the result; failed: see error and hint; running: timeout_seconds passed first, watch again'),
  state_name: z.string().describe('The state the run is in now'),
  transitions: z.array(streamTransition).describe('Every transition of the run so far, in order'),
  state_data: z.record(z.string(), z.unknown()).optional().describe('The output of the workflow type, once terminal'),
  error: failure.optional().describe('Why the run failed: message, failure_type, failed_step, …'),
  hint: z.string().optional().describe('What to do next'),
});
export type WatchOutcome = z.output<typeof watchOutcome>;

type Run = z.output<typeof run>;

export const retryHint = (workflowId: string) =>
  `If the cause is fixed (a token, a connection, the provider is back), call retry_workflow {"workflow_id": "${workflowId}"} ` +
  `(POST /api/workflows/${workflowId}/retry) to re-drive the run from its last good state; ` +
  'if the input itself was wrong, start a new run with corrected initial_data.';

function failureOf(stateData: Record<string, unknown>) {
  const error: Record<string, unknown> = { message: String(stateData.failure_reason ?? 'run failed') };
  for (const key of Object.keys(failureFields)) if (stateData[key] !== undefined) error[key] = stateData[key];
  return failure.parse(error);
}

/** Where a run stands when the watch ends without the stream's end event. */
function outcomeOfRun(runView: Run, transitions: StreamTransition[]): WatchOutcome {
  const base = { workflow_id: runView.workflow_id, state_name: runView.state_name, transitions };
  if (runView.status === 'RUNNING') return { ...base, outcome: 'running', hint: 'Call watch_workflow again to keep waiting.' };
  const stateData = runView.state_data ?? {};
  if (runView.status === 'COMPLETED') return { ...base, outcome: 'completed', state_data: stateData };
  return { ...base, outcome: 'failed', state_data: stateData, error: failureOf(stateData), hint: retryHint(runView.workflow_id) };
}

/** Answers worth asking again after a pause: throttled, or the API (or a proxy before it) unavailable. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A dropped connection (undici's `fetch failed` or a body `terminated`, both TypeErrors) or an
 * answer to retry; its pause in ms (a Retry-After is followed), or undefined when it is final.
 */
function reconnectDelay(err: unknown, reconnects: number): number | undefined {
  if (err instanceof RunApiError) {
    if (!RETRIED_STATUSES.has(err.status)) return undefined;
    if (err.retryAfter !== undefined) return err.retryAfter * 1000;
  } else if (!(err instanceof TypeError)) return undefined;
  return backoffMs(reconnects);
}

/** 250 ms, 500 ms, 1 s … capped at 4 s, with jitter so that many watchers do not come back at once. */
const backoffMs = (reconnects: number) => Math.min(4_000, 250 * 2 ** reconnects) * (0.5 + Math.random() / 2);

/**
 * Follows a run's SSE stream, calling `onTransition` for each transition (the history so far
 * first), until the run ends, `timeoutMs` passes or `signal` aborts. A stream that drops before
 * the end (a network cut, an API process shutting down, a 429 or 503) is reopened after the last
 * seq seen (Last-Event-ID) until the time-out: each transition is passed on once, in order.
 */
export async function watchRun(
  api: RunApiClient,
  workflowId: string,
  options: { timeoutMs: number; signal: AbortSignal; onTransition: (t: StreamTransition) => Promise<void> },
): Promise<WatchOutcome> {
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal]);
  const transitions: StreamTransition[] = [];
  let lastSeq: number | undefined;
  for (let reconnects = 0; !signal.aborted; reconnects += 1) {
    let delayMs = 0;
    try {
      for await (const { event, data } of api.stream(workflowId, signal, lastSeq)) {
        if (event === 'transition') {
          const t = streamTransition.parse(data);
          if (lastSeq !== undefined && t.seq <= lastSeq) continue;
          lastSeq = t.seq;
          reconnects = 0;
          transitions.push(t);
          await options.onTransition(t);
          continue;
        }
        if (event === 'revoked') throw new RunApiError(401, 'unauthorized', 'the token was revoked while watching', null);
        const end = { workflow_id: workflowId, state_name: String(data.state_name), transitions };
        const stateData = (data.state_data ?? {}) as Record<string, unknown>;
        if (event === 'completed') return { ...end, outcome: 'completed', state_data: stateData };
        if (event === 'failed') {
          return { ...end, outcome: 'failed', state_data: stateData, error: failure.parse(data.error), hint: retryHint(workflowId) };
        }
      }
      delayMs = reconnects === 0 ? 0 : backoffMs(reconnects);
    } catch (err) {
      if (signal.aborted) break;
      const delay = reconnectDelay(err, reconnects);
      if (delay === undefined) throw err;
      delayMs = delay;
    }
    // An abort ends the pause early, and the loop with it.
    await setTimeout(delayMs, undefined, { signal }).catch(() => undefined);
  }
  if (options.signal.aborted) throw options.signal.reason;
  return outcomeOfRun(await api.get<Run>(`/workflows/${encodeURIComponent(workflowId)}`), transitions);
}
