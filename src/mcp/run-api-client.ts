import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, fetch, type Response } from 'undici';

/**
 * undici 8 on an Agent of its own, not the global fetch: Node 24.19's bundled undici waits a
 * setTimeout(0), 1 ms at least, before each request on a reused connection (README, SDK, Transport),
 * and every tool call over /mcp is a loopback request to this same API.
 */
const dispatcher = new Agent();

/** A non-2xx answer of the run API, with its `{error: {code, message, details}}` body. */
export class RunApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
    /** Seconds, from a 429's or 503's Retry-After. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * The run API over HTTP with one bearer token: what both MCP transports call, so a tool
 * behaves the same over stdio against any deployment and over /mcp inside the API, and
 * passes through the same authentication, validation and limits as any other client.
 */
export class RunApiClient {
  readonly base: string;

  constructor(
    origin: string,
    private readonly authorization: string,
  ) {
    this.base = `${origin.replace(/\/+$/, '').replace(/\/api$/, '')}/api`;
  }

  async get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    const qs = params.size ? `?${params}` : '';
    return (await this.request<T>('GET', `${path}${qs}`)).body;
  }

  async post<T>(path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.request<T>('POST', path, body, headers);
  }

  /**
   * The run's SSE stream, event by event, until the server closes it or `signal` aborts;
   * after `lastEventId` (a seq) when given.
   */
  async *stream(workflowId: string, signal: AbortSignal, lastEventId?: number): AsyncGenerator<StreamEvent> {
    const headers: Record<string, string> = { authorization: this.authorization, accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
    const res = await fetch(`${this.base}/workflows/${encodeURIComponent(workflowId)}/stream`, { headers, signal, dispatcher });
    if (!res.ok || !res.body) throw await this.errorOf(res);
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => queue.push(e) });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (queue.length) {
        const e = queue.shift()!;
        yield { event: e.event ?? 'message', data: JSON.parse(e.data) };
      }
    }
  }

  private async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        authorization: this.authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher,
    });
    if (!res.ok) throw await this.errorOf(res);
    return { body: (await res.json()) as T, headers: res.headers };
  }

  private async errorOf(res: Response): Promise<RunApiError> {
    const text = await res.text();
    const retryAfter = Number.parseInt(res.headers.get('retry-after') ?? '', 10);
    const seconds = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined;
    try {
      const { error } = JSON.parse(text) as { error: { code: string; message: string; details: unknown } };
      return new RunApiError(res.status, error.code, error.message, error.details ?? null, seconds);
    } catch {
      return new RunApiError(res.status, 'http_error', `the API answered ${res.status} ${res.statusText}`, null, seconds);
    }
  }
}
