import { backoffMs, sleep } from './backoff.js';
import { ConnectionError, errorFromResponse, retryAfterSeconds, WorkflowEngineError } from './errors.js';

/** A token, or a function answering the current one (a browser auth SDK's token getter plugs in). */
export type TokenSource = string | (() => string | Promise<string>);

export interface ClientOptions {
  /** The API's origin (`http://127.0.0.1:3000`); a trailing `/api` is accepted. */
  baseUrl: string;
  token: TokenSource;
  /** Defaults to the global fetch (Node ≥ 20, browsers). */
  fetch?: typeof fetch;
  /** Per request, streams excepted. Default 30 000. */
  timeoutMs?: number;
  /** Retries of an idempotent call answered 429 or 503 (or cut by the network). Default 3. */
  maxRetries?: number;
}

export interface RequestOptions {
  method?: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to repeat: retried on 429, 503 and network errors. */
  idempotent: boolean;
  signal?: AbortSignal;
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
  headers: Headers;
}

const RETRYABLE_STATUS = new Set([429, 503]);

/** Every call of the SDK goes through here: authentication, time-out, typed errors and retries. */
export class Transport {
  readonly apiBase: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  readonly maxRetries: number;

  constructor(private readonly options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('WorkflowEngine: baseUrl is required');
    if (!options.token) throw new TypeError('WorkflowEngine: token is required');
    this.apiBase = `${options.baseUrl.replace(/\/+$/, '').replace(/\/api$/, '')}/api`;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
  }

  async authorization(): Promise<string> {
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    return `Bearer ${token}`;
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.set(k, String(v));
    const qs = params.size ? `?${params}` : '';
    return `${this.apiBase}${path}${qs}`;
  }

  async request<T>(path: string, options: RequestOptions): Promise<ApiAnswer<T>> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.send(path, options);
      } catch (err) {
        if (options.signal?.aborted || !options.idempotent || attempt >= this.maxRetries) throw asConnectionError(err);
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      if (res.ok) {
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
      }
      const error = errorFromResponse(res.status, await res.text(), res.headers);
      if (!options.idempotent || !RETRYABLE_STATUS.has(res.status) || attempt >= this.maxRetries) throw error;
      const after = retryAfterSeconds(res.headers);
      await sleep(after === undefined ? backoffMs(attempt) : after * 1000, options.signal);
    }
  }

  /** The raw response of a streaming GET; the caller reads the body. Errors are typed like any call. */
  async open(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path), { headers: { authorization: await this.authorization(), ...headers }, signal });
    } catch (err) {
      throw asConnectionError(err);
    }
    if (!res.ok || !res.body) throw errorFromResponse(res.status, await res.text(), res.headers);
    return res;
  }

  private async send(path: string, options: RequestOptions): Promise<Response> {
    const signals = [AbortSignal.timeout(this.timeoutMs)];
    if (options.signal) signals.push(options.signal);
    const hasBody = options.body !== undefined;
    return this.fetchImpl(this.url(path, options.query), {
      method: options.method ?? 'GET',
      headers: {
        authorization: await this.authorization(),
        accept: 'application/json',
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      body: hasBody ? JSON.stringify(options.body) : undefined,
      signal: AbortSignal.any(signals),
    });
  }
}

function asConnectionError(err: unknown): Error {
  if (err instanceof WorkflowEngineError) return err;
  if (err instanceof Error && err.name === 'AbortError') return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConnectionError(`could not reach the Workflow Engine API: ${message}`, 0, 'connection_failed');
}
