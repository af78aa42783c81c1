import { WaitTimeoutError, WorkflowFailedError } from './errors.js';
import { type RunEvent, runEvents } from './events.js';
import type { Transport } from './transport.js';
import type { CancelResult, Run, StartResult } from './types.js';

/** One run, by id: its live events, its outcome, its current state, retry and cancel. */
export class RunHandle<Output = Record<string, unknown>> {
  constructor(
    private readonly transport: Transport,
    readonly workflowId: string,
    /** True when a start with an Idempotency-Key returned the run an earlier start created. */
    readonly replayed = false,
  ) {}

  /**
   * The run's transitions (its history first, then live), ending with `completed` or `failed`.
   * Survives dropped connections (Last-Event-ID): no gap, no duplicate.
   */
  events(options: { signal?: AbortSignal } = {}): AsyncGenerator<RunEvent<Output>> {
    return runEvents<Output>(this.transport, this.workflowId, options);
  }

  /** The terminal state_data of a COMPLETED run; throws WorkflowFailedError for a FAILED or CANCELLED one. */
  async wait(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Output> {
    const signals: AbortSignal[] = [];
    const timeout = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    if (timeout) signals.push(timeout);
    if (options.signal) signals.push(options.signal);
    try {
      for await (const event of this.events({ signal: signals.length ? AbortSignal.any(signals) : undefined })) {
        if (event.type === 'completed') return event.stateData;
        if (event.type === 'failed') throw new WorkflowFailedError(this.workflowId, event.error, event.stateData);
      }
    } catch (err) {
      if (timeout?.aborted && !(err instanceof WorkflowFailedError)) throw new WaitTimeoutError(this.workflowId, options.timeoutMs!);
      throw err;
    }
    throw new Error(`the stream of run ${this.workflowId} ended without an outcome`);
  }

  async get(): Promise<Run<Output>> {
    return (await this.transport.request<Run<Output>>(`/workflows/${encodeURIComponent(this.workflowId)}`, { idempotent: true })).body;
  }

  /** Re-drives a FAILED (or CANCELLED) run from its last good state; same id, attempt + 1. */
  async retry(): Promise<StartResult> {
    const path = `/workflows/${encodeURIComponent(this.workflowId)}/retry`;
    return (await this.transport.request<StartResult>(path, { method: 'POST', idempotent: false })).body;
  }

  /** Asks the run to stop; it ends CANCELLED (failure_type cancelled). */
  async cancel(): Promise<CancelResult> {
    const path = `/workflows/${encodeURIComponent(this.workflowId)}/cancel`;
    return (await this.transport.request<CancelResult>(path, { method: 'POST', idempotent: false })).body;
  }
}
