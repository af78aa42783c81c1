import { randomBytes } from 'node:crypto';
import { type BenchOutcome, ms, report, type SummaryLine, verdict } from './lib/report';
import { type BenchStack, NO_PROJECTION_QUEUE, scaled } from './lib/stack';
import { interval, mean, p50Of, percentile, ratio, ratioInterval, round, sideBySide, summarize } from './lib/stats';

const TYPE = 'esign.resources.get-resource-information';

/**
 * 2. Cost of the projection: start → terminal (client.workflow.execute until the result) of the
 * Atomic type, its provider call answered at once by the loopback double, against bareEsignGet,
 * a bare Temporal workflow making the same activity call without state machine or projection.
 * A third side runs the engine's workflow on a worker whose projection activities write nothing,
 * which splits the difference into "state machine" and "database writes".
 */
export async function projectionCost(stack: BenchStack): Promise<BenchOutcome> {
  // Rounds of 8 and of 32 runs per side: enough pairs for the interval of each ratio.
  const levels = [
    { concurrency: 1, n: scaled(80, 10), rounds: 10 },
    { concurrency: 16, n: scaled(192, 32), rounds: 6 },
  ];
  const initial = { base_url: stack.esignUrl };
  const id = (p: string) => `wf_${p}_${randomBytes(8).toString('hex')}`;
  const rows: Array<Record<string, unknown>> = [];
  const ratios: Array<Record<string, unknown>> = [];
  const summary: SummaryLine[] = [];
  const projectionRows: Array<Record<string, unknown>> = [];
  const roundsPerLevel: string[] = [];

  for (const { concurrency, n, rounds } of levels) {
    stack.projectionTimes.reset();
    const [engine, noProjection, bare] = await sideBySide(
      [
        {
          label: 'engine (projection on)',
          task: async () => {
            await stack.client.workflow.execute(TYPE, stack.startOptions(TYPE, id('proj'), initial));
          },
        },
        {
          label: 'engine, projection writes nothing',
          task: async () => {
            await stack.client.workflow.execute(TYPE, stack.startOptions(TYPE, id('noproj'), initial, NO_PROJECTION_QUEUE));
          },
        },
        {
          label: 'bare Temporal (bareEsignGet)',
          task: async () => {
            // Same start options (search attributes, memo), only the workflow and its argument differ.
            await stack.client.workflow.execute('bareEsignGet', { ...stack.startOptions(TYPE, id('bare'), initial), args: [initial] });
          },
        },
      ],
      n,
      concurrency,
      rounds,
    );
    for (const s of [engine, noProjection, bare]) rows.push({ concurrency, ...summarize(s) });
    const e = summarize(engine);
    const np = summarize(noProjection);
    const b = summarize(bare);
    const r50 = ratio(e.p50_ms, b.p50_ms);
    const within = interval(ratioInterval(engine, bare, p50Of));
    roundsPerLevel.push(`${engine.chunks?.length} rounds at c=${concurrency}`);
    ratios.push({
      concurrency,
      'p50 engine/bare': r50,
      'p50, 95% interval': within,
      'p99 engine/bare': ratio(e.p99_ms, b.p99_ms),
      'p50 engine-without-DB/bare': ratio(np.p50_ms, b.p50_ms),
      'throughput engine/bare': ratio(e.throughput_per_s, b.throughput_per_s),
      'target p50 ≤ 1.3': verdict(r50 <= 1.3),
    });
    const t = stack.projectionTimes;
    projectionRows.push({
      concurrency,
      'projectRunStarted p50 ms': round(percentile(t.runStarted, 50)),
      'projectRunStarted mean ms': round(mean(t.runStarted)),
      'projectTransition p50 ms': round(percentile(t.transition, 50)),
      'projectTransition p99 ms': round(percentile(t.transition, 99)),
      'projectTransition mean ms': round(mean(t.transition)),
      'engine p50 - no-DB p50 (ms)': round(e.p50_ms - np.p50_ms),
      'no-DB p50 - bare p50 (ms)': round(np.p50_ms - b.p50_ms),
    });
    summary.push({
      benchmark: `2. projection, c=${concurrency}`,
      metric: 'p50 ms start→terminal',
      subject: `engine ${ms(e.p50_ms)}`,
      baseline: `bare ${ms(b.p50_ms)}`,
      ratio: r50,
      interval: within,
      target: concurrency === 1 ? '≤ 1.3' : '(≤ 1.3)',
    });
  }
  return report(
    'projection-cost',
    [
      { title: '2. Cost of the projection: start → terminal (ms), runs/s', rows },
      { title: '2. Cost of the projection: ratios', rows: ratios },
      { title: '2. Where the difference goes: time inside the projection activities (local activities, per call)', rows: projectionRows },
    ],
    summary,
    [
      `type ${TYPE}, provider = loopback e-signature double (answers at once); all three started with client.workflow.execute, payload codec on`,
      "the engine run's activity carries the run's start and writes it before it runs (write-ahead); its end is written by a local activity, beside the state search attribute's upsert",
      `95% interval: paired bootstrap over the ${roundsPerLevel.join(' and ')} (bench/lib/stats.ts ratioInterval)`,
    ],
  );
}
