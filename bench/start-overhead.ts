import { newRunId } from '../src/runs/run-ids';
import { RunRegistrations } from '../activities/run-registrations';
import type { CallerSide } from './lib/caller-process';
import { startCallers } from './lib/callers';
import { type BenchOutcome, ms, report, type SummaryLine, verdict } from './lib/report';
import { scaled, type BenchStack } from './lib/stack';
import { interval, p50Of, ratio, ratioInterval, round, sideBySide, summarize, throughputOf } from './lib/stats';

const TYPE = 'esign.resources.get-resource-information';

/**
 * 1. Start overhead: POST /api/workflows/start against client.workflow.start (same type, same
 * search attributes and memo, same server, same worker), at concurrency 1 and 32. What is timed
 * is the start call only; the runs then execute in the background, and each chunk's runs are
 * drained before the next side's chunk, so each side bears the execution of its own runs only.
 * GET /api/auth/me is timed alongside as a reference: HTTP + token lookup, no start. The callers
 * (the API's HTTP client, the direct Temporal client) run in a process of their own, as the
 * services calling either one would: their clients' work is not done on the engine's event loop.
 */
export async function startOverhead(stack: BenchStack): Promise<BenchOutcome> {
  const levels = [
    { concurrency: 1, n: scaled(600, 10), rounds: 20 },
    { concurrency: 32, n: scaled(640, 64), rounds: 8 },
  ];
  const initial = { base_url: stack.esignUrl };
  const registrations = new RunRegistrations(stack.database.db);
  const rows: Array<Record<string, unknown>> = [];
  const ratios: Array<Record<string, unknown>> = [];
  const summary: SummaryLine[] = [];
  const roundsPerLevel: string[] = [];

  const callers = await startCallers({
    apiUrl: stack.apiUrl,
    token: stack.token,
    temporalAddress: stack.temporalAddress,
    namespace: stack.config.temporalNamespace,
    masterKeyHex: stack.masterKey.toString('hex'),
  });
  const started: string[] = [];
  const remote = (label: string, side: CallerSide) => ({
    label,
    chunk: async (size: number, concurrency: number) => {
      const sample = await callers.measure(side, size, concurrency);
      started.push(...sample.workflowIds);
      return sample;
    },
  });

  for (const { concurrency, n, rounds } of levels) {
    let drainMs = 0;
    const [api, direct, me, statements] = await sideBySide(
      [
        remote('POST /api/workflows/start', { kind: 'api-start', workflowType: TYPE, initialData: initial }),
        remote('client.workflow.start', { kind: 'direct-start', workflowType: TYPE, options: stack.startOptions(TYPE, 'each call its own id', initial) }),
        remote('GET /api/auth/me (reference)', { kind: 'api-get', path: '/api/auth/me' }),
        {
          label: "the start's DB write alone (reference)",
          task: async () => {
            // What POST /start does in the database besides Temporal: register the run (the token
            // comes from the cache), as the API registers it.
            await registrations.projectRunStarted({
              workflow_id: newRunId(),
              organization_uuid: stack.org,
              workflow_type: TYPE,
              version: '1.0',
              state_name: 'pending',
              attempt: 1,
              at: new Date().toISOString(),
            });
          },
        },
      ],
      n,
      concurrency,
      rounds,
      // Each chunk's runs finish before the next side's chunk starts, untimed: otherwise a side is
      // measured while the worker still executes the previous side's runs (at c=32 they take
      // seconds to drain), and which side inherits that backlog swung the ratio by ±0.1.
      async () => {
        const drain0 = performance.now();
        await stack.waitTerminal(started.splice(0));
        drainMs = Math.max(drainMs, performance.now() - drain0);
      },
    );
    for (const s of [api, direct, me, statements]) rows.push({ concurrency, ...summarize(s) });
    const a = summarize(api);
    const d = summarize(direct);
    const r = { p50: ratio(a.p50_ms, d.p50_ms), p99: ratio(a.p99_ms, d.p99_ms), throughput: ratio(a.throughput_per_s, d.throughput_per_s) };
    roundsPerLevel.push(`${api.chunks?.length} rounds at c=${concurrency}`);
    const within = { p50: interval(ratioInterval(api, direct, p50Of)), throughput: interval(ratioInterval(api, direct, throughputOf)) };
    ratios.push({
      concurrency,
      'p50 API/direct': r.p50,
      'p50, 95% interval': within.p50,
      'p99 API/direct': r.p99,
      'throughput API/direct': r.throughput,
      'throughput, 95% interval': within.throughput,
      'p50 target ≤ 1.25 (c=1)': concurrency === 1 ? verdict(r.p50 <= 1.25) : '',
      'throughput target ≥ 0.9 (c=32)': concurrency === 1 ? '' : verdict(r.throughput >= 0.9),
      'longest drain after a chunk (s)': round(drainMs / 1000, 1),
    });
    summary.push(
      { benchmark: `1. start, c=${concurrency}`, metric: 'p50 ms', subject: `API ${ms(a.p50_ms)}`, baseline: `direct ${ms(d.p50_ms)}`, ratio: r.p50, interval: within.p50, target: concurrency === 1 ? '≤ 1.25' : '' },
      { benchmark: `1. start, c=${concurrency}`, metric: 'p99 ms', subject: `API ${ms(a.p99_ms)}`, baseline: `direct ${ms(d.p99_ms)}`, ratio: r.p99, target: '' },
      {
        benchmark: `1. start, c=${concurrency}`,
        metric: 'starts/s',
        subject: `API ${a.throughput_per_s}`,
        baseline: `direct ${d.throughput_per_s}`,
        ratio: r.throughput,
        interval: within.throughput,
        target: concurrency === 1 ? '' : '≥ 0.9',
      },
    );
  }
  await callers.close();
  return report(
    'start-overhead',
    [
      { title: '1. Start overhead: latency of the start call (ms), throughput (starts/s)', rows },
      { title: '1. Start overhead: ratios (API / direct)', rows: ratios },
    ],
    summary,
    [
      `type ${TYPE}; the API adds to the same Temporal start: HTTP + Nest, the token lookup (cached for TOKEN_CACHE_TTL_MS), zod validation, a database check (Postgres: a ping begun as the request arrives; in-process PGlite: none) and registering the run after the start (starts registered together in one statement)`,
      'the callers (undici 8 on keep-alive connections for the API, not Node 24\'s fetch: bench/lib/http.ts; the Temporal client for direct starts) run in a process of their own; the engine (API + worker) in the benchmark\'s',
      'references: auth/me = HTTP + Nest + token lookup, no start; "DB write" = the database work of a start (register the run) called directly',
      `95% intervals: paired bootstrap over the ${roundsPerLevel.join(' and ')} (bench/lib/stats.ts ratioInterval); a target is met beyond the noise only when its whole interval is on its side`,
    ],
  );
}
