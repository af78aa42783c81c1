import { z } from 'zod';
import { failureFields } from '../../workflows/runtime/definition';
import type { run } from '../openapi/run-schemas';
import type { RunApiClient } from './run-api-client';

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

/**
 * Follows a run's SSE stream, calling `onTransition` for each transition (the history so far
 * first), until the run ends, `timeoutMs` passes or `signal` aborts.
 */
export async function watchRun(
  api: RunApiClient,
  workflowId: string,
  options: { timeoutMs: number; signal: AbortSignal; onTransition: (t: StreamTransition) => Promise<void> },
): Promise<WatchOutcome> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const transitions: StreamTransition[] = [];
  try {
    for await (const { event, data } of api.stream(workflowId, AbortSignal.any([deadline, options.signal]))) {
      if (event === 'transition') {
        const t = streamTransition.parse(data);
        transitions.push(t);
        await options.onTransition(t);
        continue;
      }
      const end = { workflow_id: workflowId, state_name: String(data.state_name), transitions };
      const stateData = (data.state_data ?? {}) as Record<string, unknown>;
      if (event === 'completed') return { ...end, outcome: 'completed', state_data: stateData };
      if (event === 'failed') {
        return { ...end, outcome: 'failed', state_data: stateData, error: failure.parse(data.error), hint: retryHint(workflowId) };
      }
    }
  } catch (err) {
    if (!deadline.aborted) throw err;
  }
  return outcomeOfRun(await api.get<Run>(`/workflows/${encodeURIComponent(workflowId)}`), transitions);
}
