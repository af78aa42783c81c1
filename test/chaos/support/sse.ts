import { createParser } from 'eventsource-parser';
import type { ChaosStack } from './chaos-stack';
import { sleep } from './chaos-stack';

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/** What one SSE client saw over all its connections to one run's stream. */
export interface StreamClient {
  runId: string;
  events: SseEvent[];
  /** Connections that delivered a 200 stream. */
  connections: number;
  /** Each time an open stream was cut (the API died under it): when, and after how many events. */
  drops: Array<{ at: number; afterEvents: number; reason: string }>;
  /** Connection attempts refused or answered non-200 while the API was down or restarting. */
  refused: number;
  /** Streams that went silent (no event, no keep-alive) for idleMs: the hang detector. */
  stalls: number;
  /** Last-Event-ID values sent on reconnects. */
  resumedFrom: string[];
  /** The server closed the stream after a terminal event. */
  done: boolean;
  problems: string[];
}

/**
 * A client that follows a run's stream to its end the way a browser's
 * EventSource would: on a dropped connection it reconnects (every 200 ms while
 * the API is down) with Last-Event-ID set to the last id it received. Keep-alive
 * comments (SSE_KEEPALIVE_MS=1000 on the chaos stack) prove a quiet stream alive;
 * one silent for idleMs counts as a stall and is reconnected.
 */
export async function followStream(
  chaos: ChaosStack,
  runId: string,
  options: { idleMs?: number; deadlineMs?: number; lastEventId?: string } = {},
): Promise<StreamClient> {
  const idleMs = options.idleMs ?? 8_000;
  const deadline = Date.now() + (options.deadlineMs ?? 180_000);
  const client: StreamClient = { runId, events: [], connections: 0, drops: [], refused: 0, stalls: 0, resumedFrom: [], done: false, problems: [] };
  let lastId = options.lastEventId;
  let terminal = false;

  while (!client.done && Date.now() < deadline && !chaos.closed) {
    if (chaos.crashed().length) break;
    const controller = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    let stalled = false;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, idleMs);
    };
    const headers: Record<string, string> = { authorization: `Bearer ${chaos.token}`, accept: 'text/event-stream' };
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    let res: Response;
    try {
      arm();
      res = await fetch(`${chaos.apiUrl}/api/workflows/${runId}/stream`, { headers, signal: controller.signal });
    } catch {
      clearTimeout(idle);
      if (stalled) client.stalls += 1;
      else client.refused += 1;
      await sleep(200);
      continue;
    }
    if (res.status !== 200 || !res.body) {
      clearTimeout(idle);
      await res.body?.cancel().catch(() => undefined);
      client.refused += 1;
      if (res.status < 500 && res.status !== 429) {
        client.problems.push(`stream answered ${res.status}`);
        break;
      }
      await sleep(200);
      continue;
    }
    client.connections += 1;
    if (client.connections > 1) client.resumedFrom.push(lastId ?? '(none)');
    let reason = 'server closed the stream';
    let closeTimer: NodeJS.Timeout | undefined;
    let notClosed = false;
    // One parser per connection: an event cut off by a dropped connection is not half-delivered.
    const parser = createParser({
      onEvent: (e) => {
        const event: SseEvent = { event: e.event ?? 'message', id: e.id, data: JSON.parse(e.data) };
        if (terminal) client.problems.push(`event ${event.event} ${event.id} after the terminal event`);
        client.events.push(event);
        if (event.id !== undefined) lastId = event.id;
        if ((event.event === 'completed' || event.event === 'failed') && !terminal) {
          terminal = true;
          // The server must close the stream after its end event.
          closeTimer = setTimeout(() => {
            notClosed = true;
            controller.abort();
          }, 5_000);
        }
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        // Keep-alives arrive every second, so this is noticed: the suite is over, the deadline has
        // passed, or a service process crashed (its runs will never end; the stream would idle forever).
        if (chaos.closed || Date.now() > deadline || chaos.crashed().length) {
          controller.abort();
          break;
        }
        arm();
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (err) {
      reason = stalled ? 'stalled' : `${(err as Error).name}: ${(err as Error).message}`;
    } finally {
      clearTimeout(idle);
      clearTimeout(closeTimer);
    }
    if (stalled) client.stalls += 1;
    if (notClosed) client.problems.push('the server kept the stream open after its end event');
    if (terminal) {
      // A client stops at the end event, as an EventSource consumer does.
      client.done = true;
      if (reason !== 'server closed the stream' && !notClosed) client.drops.push({ at: Date.now(), afterEvents: client.events.length, reason });
    } else {
      client.drops.push({ at: Date.now(), afterEvents: client.events.length, reason });
      await sleep(200);
    }
  }
  if (!client.done) client.problems.push(`no end of stream by the deadline (${client.events.length} events)`);
  return client;
}

/**
 * Every client must have seen each transition of the run exactly once, in order
 * (seq 1..n with the history's from, to, action and at), then exactly one
 * terminal event matching the run's status, carrying the last seq as its id.
 */
export function checkStream(client: StreamClient, run: any, history: any[]): string[] {
  const problems = [...client.problems];
  const transitions = client.events.filter((e) => e.event === 'transition');
  const ends = client.events.filter((e) => e.event === 'completed' || e.event === 'failed');
  const seen = transitions.map((e) => e.data.seq);
  const want = history.map((t) => t.seq);
  if (JSON.stringify(seen) !== JSON.stringify(want)) problems.push(`saw seq ${JSON.stringify(seen)}, history ${JSON.stringify(want)}`);
  transitions.forEach((e, i) => {
    const t = history[i];
    if (!t) return;
    if (e.id !== String(e.data.seq)) problems.push(`event id ${e.id} for seq ${e.data.seq}`);
    const same = e.data.from === t.from && e.data.to === t.to && e.data.action === t.action && e.data.at === t.at;
    if (!same) problems.push(`seq ${t.seq}: streamed ${JSON.stringify(e.data)}, history ${JSON.stringify(t)}`);
  });
  if (ends.length !== 1) problems.push(`${ends.length} terminal events`);
  const end = ends[0];
  const expected = run.status === 'COMPLETED' ? 'completed' : 'failed';
  if (end && (end.event !== expected || end.id !== String(history.length) || client.events.at(-1) !== end)) {
    problems.push(`terminal event ${end.event} id ${end.id} (run ${run.status}, ${history.length} transitions, last event ${client.events.at(-1)?.event})`);
  }
  return problems;
}
