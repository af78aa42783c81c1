import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { createProjection } from '../activities/projection';
import { runs } from '../db/schema';
import { watchStream } from './lib/http';
import { type BenchOutcome, ms, report, type SummaryLine, verdict } from './lib/report';
import { type BenchStack, envNumber } from './lib/stack';
import { blockRatioInterval, interval, percentile, ratio, round } from './lib/stats';

const TYPE = 'bench.ticker';

interface StreamResult {
  workflowId: string;
  connectedAt: number;
  arrivals: Array<[number, number]>;
  ended?: string;
  /** For a stream still open when the clients were stopped: how long nothing (not even a keep-alive) had arrived. */
  silentForMs: number;
  counts: { bytes: number; transitions: number; comments: number };
}

/** Runs the SSE clients in a worker thread: resolves once they are connected, then with their results. */
function clientsThread(apiUrl: string, token: string, ids: string[]) {
  const worker = new Worker(path.join(__dirname, 'lib', 'sse-clients.js'), { workerData: { apiUrl, token, ids } });
  let onConnected!: (connectMs: number) => void;
  let onDone!: (streams: StreamResult[]) => void;
  let onError!: (err: Error) => void;
  const connected = new Promise<number>((resolve, reject) => {
    onConnected = resolve;
    onError = reject;
  });
  const done = new Promise<StreamResult[]>((resolve, reject) => {
    onDone = resolve;
    const previous = onError;
    onError = (err) => {
      previous(err);
      reject(err);
    };
  });
  done.catch(() => undefined);
  worker.on('message', (m: { connected?: { connectMs: number }; done?: { streams: StreamResult[] }; error?: string }) => {
    if (m.connected) onConnected(m.connected.connectMs);
    if (m.done) {
      onDone(m.done.streams);
      void worker.terminate();
    }
    if (m.error) onError(new Error(`SSE client thread: ${m.error}`));
  });
  worker.on('error', (err) => onError(err));
  return { connected, done, stop: () => worker.postMessage('stop') };
}

/**
 * 3. Stream delivery: the time from a transition's projection commit (timestamped in the worker's
 * projection activity) to the moment its `transition` event is parsed by an SSE client (the
 * clients run in a worker thread of this process, on their own event loop; both sides use the
 * same epoch clock). The same workload runs at every level: R runs of bench.ticker, each
 * committing a transition every interval on a durable timer, phases spread; 1, 100 and 1,000
 * clients are spread round-robin over the runs and connected before the runs start, so every
 * transition counts. The baseline is one client per run: a single client sees 22 transitions a
 * round, too few for a p99 (its "p99" was the maximum of ~60 samples); one per run gives
 * R × 22 a round, repeated (BENCH_SSE_BASELINE_ROUNDS) and pooled.
 */
export async function streamDelivery(stack: BenchStack): Promise<BenchOutcome> {
  const runCount = envNumber('BENCH_SSE_RUNS', 40);
  const levels = (process.env.BENCH_SSE_CLIENTS ?? `${runCount},100,1000`).split(',').map(Number);
  const ticks = envNumber('BENCH_SSE_TICKS', 20);
  const intervalMs = envNumber('BENCH_SSE_INTERVAL_MS', 1000);
  const baselineRounds = envNumber('BENCH_SSE_BASELINE_ROUNDS', 2);
  /** How long the clients are given to receive the end of their streams once every run has ended. */
  const graceMs = 20_000;
  const rows: Array<Record<string, unknown>> = [];
  const perLevel = new Map<number, { p50: number; p99: number; runsS: number; samples: number; seconds: number[][] }>();
  const stuck: Array<Record<string, unknown>> = [];
  const projection = createProjection(stack.database.db);
  const transitionsPerRun = ticks + 2; // start, the ticks, finish

  for (const clients of levels) {
    const rounds = clients === levels[0] ? baselineRounds : 1;
    const latencies: number[] = [];
    /** The deliveries of each transition seq of each round: every run commits its seq k within the same second. */
    const seconds = new Map<string, number[]>();
    let expected = 0;
    let missing = 0;
    let connectMs = 0;
    let committed = 0;
    let lastRunEndS = 0;
    const how: Record<string, number> = {};
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: runCount }, () => `wf_tick_${randomBytes(8).toString('hex')}`);
      stack.recordCommitsOf = new Set(ids);
      stack.commits.clear();
      // Registered in the projection first, as POST /start does, so every client is connected before the runs start.
      for (const id of ids) {
        const at = new Date().toISOString();
        await projection.projectRunStarted({ workflow_id: id, organization_uuid: stack.org, workflow_type: TYPE, version: '1.0', state_name: 'pending', attempt: 1, at });
      }
      const thread = clientsThread(stack.apiUrl, stack.token, Array.from({ length: clients }, (_, i) => ids[i % runCount]));
      connectMs = Math.max(connectMs, await thread.connected);
      const leadMs = 500;
      const started = performance.now();
      await Promise.all(
        ids.map((id, i) => stack.startDirect(TYPE, id, { ticks, interval_ms: intervalMs, lead_ms: leadMs + Math.round((intervalMs * i) / runCount) })),
      );
      // The runs first: under load they fall behind their nominal schedule (that is measured too);
      // then the clients get a short grace to receive the end of their streams.
      const nominalMs = leadMs + ticks * intervalMs;
      let allEnded = true;
      await stack.waitTerminal(ids, 4 * nominalMs + 120_000).catch(() => {
        allEnded = false;
      });
      lastRunEndS = Math.max(lastRunEndS, (performance.now() - started) / 1000);
      if (!allEnded) {
        // Leftover runs would load the benchmarks that follow.
        await Promise.all(ids.map((id) => stack.client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined)));
      }
      const timer = setTimeout(thread.stop, graceMs);
      const streams = await thread.done;
      clearTimeout(timer);
      const [ended] = await stack.database.db
        .select({ n: sql<number>`count(*)::int` })
        .from(runs)
        .where(and(inArray(runs.workflowId, ids), eq(runs.isTerminal, true)));
      committed += stack.commits.size;
      const open = streams.filter((s) => !s.ended);
      if (open.length) {
        const lastSeq = new Map<string, number>();
        for (const key of stack.commits.keys()) {
          const id = key.slice(0, key.lastIndexOf(':'));
          lastSeq.set(id, Math.max(lastSeq.get(id) ?? 0, Number(key.slice(key.lastIndexOf(':') + 1))));
        }
        const sample = open.slice(0, 3).map((s) => ({
          workflow_id: s.workflowId,
          last_seq_received: Math.max(0, ...s.arrivals.map(([seq]) => seq)),
          last_seq_committed: lastSeq.get(s.workflowId) ?? 0,
          silent_for_s: round(s.silentForMs / 1000, 1),
          ...s.counts,
          seq_of_a_finished_run: transitionsPerRun,
        }));
        // Is the server stuck, or only those streams? A fresh stream on the same run, now:
        const fresh = await watchStream(stack.apiUrl, stack.token, open[0].workflowId).catch((err: Error) => err);
        let freshResult = 'failed to open';
        if (!(fresh instanceof Error)) {
          const how = await Promise.race([fresh.ended, new Promise<string>((r) => setTimeout(() => r('still open after 10 s'), 10_000))]);
          fresh.abort();
          freshResult = `${fresh.arrivals.size} transitions, ${how}`;
        }
        const q = stack.inflightQueries();
        const queries = `${q.count} queries in flight, oldest ${round(q.oldestMs / 1000, 1)} s${q.oldest ? ` (${q.oldest})` : ''}`;
        console.log(`bench: ${open.length} of ${streams.length} streams had not ended ${graceMs / 1000} s after the runs ended; ${ended.n} of ${runCount} runs had ended; a fresh stream on ${open[0].workflowId}: ${freshResult}; ${queries}`);
        console.table(sample);
        stuck.push({ clients, open: open.length, runs_ended: ended.n, runs: runCount, fresh_stream: freshResult, database: queries, sample });
      }
      for (const s of streams) {
        const key = s.ended ?? 'never ended';
        how[key] = (how[key] ?? 0) + 1;
        const arrivals = new Map(s.arrivals);
        for (let seq = 1; seq <= transitionsPerRun; seq++) {
          const committedAt = stack.commits.get(`${s.workflowId}:${seq}`);
          if (committedAt === undefined || committedAt <= s.connectedAt) continue;
          expected += 1;
          const arrived = arrivals.get(seq);
          if (arrived === undefined) missing += 1;
          else {
            latencies.push(arrived - committedAt);
            let second = seconds.get(`${r}:${seq}`);
            if (!second) seconds.set(`${r}:${seq}`, (second = []));
            second.push(arrived - committedAt);
          }
        }
      }
    }
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    perLevel.set(clients, { p50, p99, runsS: lastRunEndS, samples: latencies.length, seconds: [...seconds.values()] });
    rows.push({
      clients,
      rounds,
      runs: runCount,
      'transitions/s nominal': round((runCount * 1000) / intervalMs, 1),
      'transitions committed': `${committed} of ${rounds * runCount * transitionsPerRun}`,
      'runs took (s; nominal)': `${round(lastRunEndS, 1)}; ${round((500 + ticks * intervalMs) / 1000, 1)}`,
      'deliveries measured': latencies.length,
      'not delivered': missing,
      'p50 ms': round(p50),
      'p90 ms': round(percentile(latencies, 90)),
      'p99 ms': round(p99),
      'max ms': round(percentile(latencies, 100)),
      'connect all (s)': round(connectMs / 1000, 1),
      'streams ended by': Object.entries(how).map(([k, v]) => `${k} ${v}`).join(', '),
    });
  }
  stack.recordCommitsOf = undefined;
  stack.commits.clear();

  const baseLevel = levels[0];
  const base = perLevel.get(baseLevel)!;
  const ratios = levels.map((c) => {
    const l = perLevel.get(c)!;
    return { clients: c, [`p50 / p50 at ${baseLevel}`]: ratio(l.p50, base.p50), [`p99 / p99 at ${baseLevel}`]: ratio(l.p99, base.p99) };
  });
  const top = levels[levels.length - 1];
  const topRatio = ratio(perLevel.get(top)!.p99, base.p99);
  // A p99 needs about 1,000 samples to rest on ten of them rather than on the maximum.
  const baseName = `${baseLevel} client${baseLevel === 1 ? '' : 's'}${baseLevel === runCount ? ' (1 per run)' : ''}`;
  const meaningful = base.samples >= 1000;
  const p99Of = (values: number[]) => percentile(values, 99);
  const summary: SummaryLine[] = levels.slice(1).map((c) => ({
    benchmark: `3. stream, ${c} clients`,
    metric: 'p99 ms commit→client',
    subject: `${c} clients ${ms(perLevel.get(c)!.p99)} (n=${perLevel.get(c)!.samples})`,
    baseline: `${baseName} ${ms(base.p99)} (n=${base.samples}${meaningful ? '' : ': too few for a p99'})`,
    ratio: ratio(perLevel.get(c)!.p99, base.p99),
    interval: interval(blockRatioInterval(perLevel.get(c)!.seconds, base.seconds, p99Of)),
    target: c === top ? '≤ 3' : '',
  }));
  summary.push({
    benchmark: `3. stream, ${top} clients`,
    metric: 'p50 ms commit→client',
    subject: `${top} clients ${ms(perLevel.get(top)!.p50)}`,
    baseline: `${baseName} ${ms(base.p50)}`,
    ratio: ratio(perLevel.get(top)!.p50, base.p50),
    target: '',
  });
  summary.push({
    benchmark: `3. stream, ${top} clients`,
    metric: `s for the ${runCount} ticker runs (nominal ${round((500 + ticks * intervalMs) / 1000, 1)})`,
    subject: `${top} clients ${round(perLevel.get(top)!.runsS, 1)}`,
    baseline: `${baseName} ${round(base.runsS, 1)}`,
    ratio: ratio(perLevel.get(top)!.runsS, base.runsS),
    target: '(the streams slow the runs)',
  });
  return report(
    'stream-delivery',
    [
      { title: '3. Stream delivery: projection commit → SSE event at the client (ms)', rows },
      { title: `3. Ratios against ${baseName} (target: p99 at ${top} ≤ 3×: ${verdict(topRatio <= 3 && meaningful)})`, rows: ratios },
    ],
    summary,
    [
      ...(stuck.length
        ? [`streams still open ${graceMs / 1000} s after the runs ended: ${stuck.map((s) => `${s.open} at ${s.clients} clients (${s.runs_ended} of ${s.runs} runs ended)`).join(', ')}`]
        : []),
      `${runCount} runs of ${TYPE}, ${ticks} ticks each, one every ${intervalMs} ms, phases spread; the same workload at every level`,
      "95% intervals of the p99 ratios: each level's deliveries resampled by the second they belong to (a transition seq of a round), whole seconds, on their own (bench/lib/stats.ts blockRatioInterval)",
      'each wake-up makes one read of that run, shared by all of its streams (its run row only when the transition ended the run), plus a 5 s re-check per run',
      '"runs took" against nominal: how far the streams\' reads slow the runs themselves (worker, API and database share one process and, on PGlite, one database thread)',
      `API, worker and database (${stack.database.kind}) share one process as in \`make up\`; the clients run in a worker thread of it`,
    ],
    { stuck_streams: stuck },
  );
}
