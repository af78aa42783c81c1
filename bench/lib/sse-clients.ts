/**
 * Worker thread holding the SSE clients of the stream benchmark, so their parsing runs on an
 * event loop of its own instead of the one serving the API and the worker (as real clients would).
 * Protocol: {open: {apiUrl, token, ids}} → {connected: {connectMs}}; then {stop} or every stream
 * ending → {done: {streams: [{workflowId, connectedAt, arrivals: [seq, at][], ended}]}}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { clock } from './clock';
import { type StreamWatch, watchStream } from './http';

interface Open {
  apiUrl: string;
  token: string;
  /** One entry per client: the run it watches. */
  ids: string[];
}

async function main() {
  const port = parentPort!;
  const { apiUrl, token, ids } = workerData as Open;
  const t0 = performance.now();
  const watches: StreamWatch[] = [];
  // Opened in batches of 50 so connection set-up is not one burst.
  for (let i = 0; i < ids.length; i += 50) {
    watches.push(...(await Promise.all(ids.slice(i, i + 50).map((id) => watchStream(apiUrl, token, id)))));
  }
  port.postMessage({ connected: { connectMs: performance.now() - t0 } });
  const ended = new Map<StreamWatch, string>();
  for (const w of watches) void w.ended.then((how) => ended.set(w, how), (err: Error) => ended.set(w, `error: ${err.message}`));
  const stopped = new Promise<void>((resolve) => port.once('message', () => resolve()));
  await Promise.race([Promise.allSettled(watches.map((w) => w.ended)), stopped]);
  const stoppedAt = clock();
  for (const w of watches) if (!ended.has(w)) w.abort();
  port.postMessage({
    done: {
      streams: watches.map((w) => ({
        workflowId: w.workflowId,
        connectedAt: w.connectedAt,
        arrivals: [...w.arrivals],
        ended: ended.get(w),
        silentForMs: stoppedAt - w.lastBytesAt(),
        counts: w.counts,
      })),
    },
  });
}

main().catch((err) => {
  parentPort!.postMessage({ error: String(err?.stack ?? err) });
});
