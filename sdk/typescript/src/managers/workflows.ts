import { RunHandle } from '../handle.js';
import type { RunEvent } from '../events.js';
import { walkable } from '../paging.js';
import type { Transport } from '../transport.js';
import type { CancelResult, Run, RunHistory, RunListFilters, RunPage, StartResult } from '../types.js';

export interface StartOptions {
  /** Makes the start safe to repeat (and so retried on 429/503): the same key and body return the same run. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A page of runs that is also an async iterator over every run of every later page. */
export interface RunList extends RunPage, AsyncIterable<Run> {}

/** /workflows…: start, read, list, history, stream, retry and cancel runs. */
export class WorkflowsManager {
  constructor(private readonly transport: Transport) {}

  async start<Output = Record<string, unknown>, Input extends object = Record<string, unknown>>(
    workflowType: string,
    initialData: Input,
    options: StartOptions = {},
  ): Promise<RunHandle<Output>> {
    const headers: Record<string, string> = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
    const res = await this.transport.request<StartResult>('/workflows/start', {
      method: 'POST',
      body: { workflow_type: workflowType, initial_data: initialData },
      headers,
      idempotent: Boolean(options.idempotencyKey),
      signal: options.signal,
    });
    return new RunHandle<Output>(this.transport, res.body.workflow_id, res.headers.get('idempotent-replayed') === 'true');
  }

  /** A handle on an existing run, without a request. */
  handle<Output = Record<string, unknown>>(workflowId: string): RunHandle<Output> {
    return new RunHandle<Output>(this.transport, workflowId);
  }

  async get<Output = Record<string, unknown>>(workflowId: string): Promise<Run<Output>> {
    return this.handle<Output>(workflowId).get();
  }

  /** One page (newest first); `for await (const run of await list(…))` walks every page. */
  async list(filters: RunListFilters = {}): Promise<RunList> {
    const first = await this.page(filters);
    return walkable(first, (p) => p.runs, (cursor) => this.page({ ...filters, cursor }));
  }

  async history(workflowId: string): Promise<RunHistory> {
    return (await this.transport.request<RunHistory>(`/workflows/${encodeURIComponent(workflowId)}/history`, { idempotent: true })).body;
  }

  stream<Output = Record<string, unknown>>(workflowId: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<RunEvent<Output>> {
    return this.handle<Output>(workflowId).events(options);
  }

  async retry(workflowId: string): Promise<StartResult> {
    return this.handle(workflowId).retry();
  }

  async cancel(workflowId: string): Promise<CancelResult> {
    return this.handle(workflowId).cancel();
  }

  private async page(filters: RunListFilters): Promise<RunPage> {
    return (await this.transport.request<RunPage>('/workflows', { query: { ...filters }, idempotent: true })).body;
  }
}
