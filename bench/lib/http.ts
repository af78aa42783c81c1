import { createParser } from 'eventsource-parser';
import { clock } from './clock';

/** The benchmark's HTTP client: Node's fetch, keep-alive, the way an SDK would call the API. */
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
  const res = await fetch(baseUrl + path, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  const expected = options.expect ?? (res.status >= 200 && res.status < 300 ? res.status : 200);
  if (res.status !== expected) throw new Error(`${options.method ?? 'GET'} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
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
