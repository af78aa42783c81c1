import { createParser } from 'eventsource-parser';
import { Agent, request as undiciRequest } from 'undici';
import { clock } from './clock';

/**
 * Keep-alive connections of the benchmark's own, on undici 8. Not Node's built-in fetch: the undici
 * Node 24.19 bundles (7.29) defers every request on a reused idle keep-alive connection behind a
 * setTimeout(0), at least 1 ms (its guard against response-queue poisoning, GHSA-35p6-xmwp-9g52;
 * nodejs/undici#5493). Measured on loopback: 1.2–1.3 ms per request against 0.04–0.1 ms here or with
 * node:http, a client-side wait that no HTTP client outside Node 24's fetch pays, and that would be
 * counted as the API's.
 */
const agent = new Agent({ keepAliveTimeout: 60_000 });

/** The benchmark's HTTP client (JSON in, JSON out), as a service calling the API would use one. */
export async function request(
  baseUrl: string,
  token: string,
  path: string,
  options: { method?: string; body?: unknown; expect?: number } = {},
): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const method = options.method ?? (body ? 'POST' : 'GET');
  const res = await undiciRequest(baseUrl + path, { dispatcher: agent, method, headers, body });
  const text = await res.body.text();
  const expected = options.expect ?? (res.statusCode >= 200 && res.statusCode < 300 ? res.statusCode : 200);
  if (res.statusCode !== expected) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

export interface StreamWatch {
  workflowId: string;
  /** clock() when the response headers arrived (the server has subscribed by then). */
  connectedAt: number;
  /** seq → clock() at which its `transition` event was parsed. */
  arrivals: Map<number, number>;
  /** clock() of the last bytes received (events or keep-alive comments). */
  lastBytesAt: () => number;
  /** What was received: bytes, transition events (repeats included), comment lines. */
  counts: { bytes: number; transitions: number; comments: number };
  ended: Promise<'completed' | 'failed' | 'closed' | 'aborted'>;
  abort(): void;
}

/** Opens GET /workflows/{id}/stream and timestamps every transition event as it is parsed. */
export async function watchStream(baseUrl: string, token: string, workflowId: string): Promise<StreamWatch> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/workflows/${workflowId}/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const connectedAt = clock();
  if (res.status !== 200 || !res.body) throw new Error(`stream ${workflowId} answered ${res.status}: ${await res.text()}`);
  const arrivals = new Map<number, number>();
  let lastBytesAt = connectedAt;
  const counts = { bytes: 0, transitions: 0, comments: 0 };
  let result: 'completed' | 'failed' | undefined;
  const ended = (async () => {
    let now = connectedAt;
    const parser = createParser({
      onEvent: (e) => {
        if (e.event === 'transition' && e.id) {
          counts.transitions += 1;
          if (!arrivals.has(Number(e.id))) arrivals.set(Number(e.id), now);
        }
        if (e.event === 'completed' || e.event === 'failed') result ??= e.event;
      },
      onComment: () => (counts.comments += 1),
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        // Every event parsed out of this chunk arrived now.
        now = clock();
        lastBytesAt = now;
        counts.bytes += chunk.length;
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (result) {
          controller.abort();
          return result;
        }
      }
      return 'closed' as const;
    } catch (err) {
      if (result) return result;
      if ((err as Error).name === 'AbortError') return 'aborted' as const;
      throw err;
    }
  })();
  return { workflowId, connectedAt, arrivals, lastBytesAt: () => lastBytesAt, counts, ended, abort: () => controller.abort() };
}
