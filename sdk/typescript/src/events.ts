import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ConnectionError, RateLimitError, ServiceUnavailableError, WorkflowEngineError } from './errors.js';
import { backoffMs, sleep } from './backoff.js';
import { type RunEvent, toRunEvent } from './run-event.js';
import type { Transport } from './transport.js';

export type { CompletedEvent, FailedEvent, RunEvent, TransitionEvent } from './run-event.js';

/**
 * The run's events until it ends. A connection the network or a proxy cuts before the end is
 * reopened with Last-Event-ID = the last transition's seq, and a transition at or below a seq
 * already delivered is dropped: no gap, no duplicate. A 429 (`too_many_streams`) or 503 is retried
 * as reads are, up to maxRetries times after Retry-After; other HTTP refusals (404, 401 …) are not.
 * A connection that delivered a transition or one of the server's keep-alives was working: a proxy
 * that cuts long idle-looking streams (a long wait between transitions) does not use up the
 * reconnects, only connections that break before they show life do.
 */
export async function* runEvents<Output>(
  transport: Transport,
  workflowId: string,
  options: { signal?: AbortSignal; afterSeq?: number } = {},
): AsyncGenerator<RunEvent<Output>> {
  let lastSeq = options.afterSeq ?? 0;
  let failures = 0;
  for (;;) {
    let delayMs: number | undefined;
    const controller = new AbortController();
    const stop = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', stop, { once: true });
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastSeq > 0) headers['last-event-id'] = String(lastSeq);
      const res = await transport.open(`/workflows/${encodeURIComponent(workflowId)}/stream`, headers, controller.signal);
      const queue: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (e) => queue.push(e), onComment: () => (failures = 0) });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length) {
          const event = toRunEvent<Output>(queue.shift()!);
          if (!event) continue;
          if (event.type === 'transition') {
            if (event.seq <= lastSeq) continue;
            lastSeq = event.seq;
            failures = 0;
            yield event;
          } else {
            yield event;
            return;
          }
        }
      }
    } catch (err) {
      if (options.signal?.aborted || !isTransient(err)) throw err;
      if (err instanceof RateLimitError || err instanceof ServiceUnavailableError) {
        if (failures >= transport.maxRetries) throw err;
        delayMs = err.retryAfter === undefined ? backoffMs(failures) : err.retryAfter * 1000;
      }
      // The connection broke or the API refused for now: reconnect below.
    } finally {
      options.signal?.removeEventListener('abort', stop);
      controller.abort();
    }
    if (failures >= transport.maxRetries + 2) {
      throw new Error(`the stream of run ${workflowId} kept closing before the run ended (${failures} reconnects)`);
    }
    await sleep(delayMs ?? (failures === 0 ? 0 : backoffMs(failures - 1)), options.signal);
    failures += 1;
  }
}

function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError || err instanceof RateLimitError || err instanceof ServiceUnavailableError) return true;
  return !(err instanceof WorkflowEngineError);
}
