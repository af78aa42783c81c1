import { randomBytes } from 'node:crypto';
import { type BenchOutcome, ms, report, type SummaryLine, verdict } from './lib/report';
import { type BenchStack, NO_PROJECTION_QUEUE, scaled } from './lib/stack';
import { interval, mean, p50Of, percentile, ratio, ratioInterval, round, sideBySide, summarize } from './lib/stats';
import { stepPhases } from './lib/step-phases';
import { LINEAR_STEPS } from './workflows';

const TYPE = 'bench.linear-40';

/** Bare Temporal doing, per step, what the engine asked of Temporal per transition before writing ahead (bench/workflows.ts bareStepsWith). */
const BARE_WITH = [
  { label: 'bare + an empty local activity per step', local_activity: true, search_attribute: false },
  { label: 'bare + a search-attribute upsert per step', local_activity: false, search_attribute: true },
  { label: 'bare + both (what the engine did per step before writing ahead)', local_activity: true, search_attribute: true },
];

/** Per-step figures from Windmill's competitor benchmark (40 light sequential steps), other hardware. */
const PUBLISHED = [
  { system: 'Hatchet', ms_per_step: 31 },
  { system: 'Windmill', ms_per_step: 52 },
  { system: 'Temporal', ms_per_step: 74 },
];

/**
 * 5. Sequential steps: the benchmark-only Linear definition bench.linear-40 (40 auto-advancing
 * states, each step one activity answered at once) against bareSteps, the same 40 activities
 * in a row in a bare Temporal workflow. A third side runs the engine with a projection that
 * writes nothing, to split the engine's cost into state machine and database.
 */
export async function sequentialSteps(stack: BenchStack): Promise<BenchOutcome> {
  const n = scaled(12, 4);
  const ids: Record<string, string[]> = {};
  const id = (p: string) => {
    const workflowId = `wf_${p}_${randomBytes(8).toString('hex')}`;
    (ids[p] ??= []).push(workflowId);
    return workflowId;
  };
  stack.projectionTimes.reset();
  const [engine, noProjection, bare, ...bareWith] = await sideBySide(
    [
      {
        label: `engine ${TYPE}`,
        task: async () => {
          await stack.client.workflow.execute(TYPE, stack.startOptions(TYPE, id('lin'), {}));
        },
      },
      {
        label: `engine ${TYPE}, projection writes nothing`,
        task: async () => {
          await stack.client.workflow.execute(TYPE, stack.startOptions(TYPE, id('lin_noproj'), {}, NO_PROJECTION_QUEUE));
        },
      },
      {
        label: `bare Temporal bareSteps(${LINEAR_STEPS})`,
        task: async () => {
          await stack.client.workflow.execute('bareSteps', { ...stack.startOptions(TYPE, id('steps'), {}), args: [{ steps: LINEAR_STEPS }] });
        },
      },
      ...BARE_WITH.map(({ label, local_activity, search_attribute }) => ({
        label,
        task: async () => {
          const args = [{ steps: LINEAR_STEPS, local_activity, search_attribute }];
          await stack.client.workflow.execute('bareStepsWith', { ...stack.startOptions(TYPE, id('steps_with'), {}, NO_PROJECTION_QUEUE), args });
        },
      })),
    ],
    n,
    1,
    // One run per side per round: each round a pair for the interval of the ratio.
    n,
  );
  const e = summarize(engine);
  const np = summarize(noProjection);
  const b = summarize(bare);
  const perStep = (x: number) => round(x / LINEAR_STEPS);
  const rows = [e, np, b, ...bareWith.map(summarize)].map((s) => ({ ...s, 'ms per step (p50/40)': perStep(s.p50_ms) }));
  const r50 = ratio(e.p50_ms, b.p50_ms);
  const within = interval(ratioInterval(engine, bare, p50Of));
  const both = summarize(bareWith[2]);
  const overheadPerStep = round((e.p50_ms - b.p50_ms) / LINEAR_STEPS);
  const projectionPerStep = round((e.p50_ms - np.p50_ms) / LINEAR_STEPS);
  const t = stack.projectionTimes.transition;
  const ratios = [
    {
      'p50 engine/bare': r50,
      'p50, 95% interval': within,
      'p99 engine/bare': ratio(e.p99_ms, b.p99_ms),
      'p50 engine-without-DB/bare': ratio(np.p50_ms, b.p50_ms),
      'p50 bare-with-both/bare (what writing ahead avoids)': ratio(both.p50_ms, b.p50_ms),
      'target ≤ 1.05': verdict(r50 <= 1.05),
      'target ≤ 15 ms per step': verdict(perStep(e.p50_ms) <= 15),
      'engine overhead per step (ms)': overheadPerStep,
      'of which the projection write (ms)': projectionPerStep,
      'projectTransition p50 / mean (ms)': `${round(percentile(t, 50))} / ${round(mean(t))}`,
    },
  ];
  const phases = [
    { side: 'engine', ...(await stepPhases(stack.client, ids.lin)) },
    { side: 'engine, projection writes nothing', ...(await stepPhases(stack.client, ids.lin_noproj)) },
    { side: 'bare', ...(await stepPhases(stack.client, ids.steps)) },
  ];
  const published = [
    { system: 'this engine (this machine)', ms_per_step: perStep(e.p50_ms) },
    { system: 'bare Temporal (this machine)', ms_per_step: perStep(b.p50_ms) },
    ...PUBLISHED.map((p) => ({ system: `${p.system} (published)`, ms_per_step: p.ms_per_step })),
  ];
  const summary: SummaryLine[] = [
    { benchmark: '5. 40 sequential steps', metric: 'p50 ms per run', subject: `engine ${ms(e.p50_ms)}`, baseline: `bare ${ms(b.p50_ms)}`, ratio: r50, interval: within, target: '≤ 1.05' },
    {
      benchmark: '5. 40 sequential steps',
      metric: 'ms per step',
      subject: `engine ${perStep(e.p50_ms)}`,
      baseline: `bare ${perStep(b.p50_ms)}`,
      ratio: r50,
      interval: within,
      target: `engine ≤ 15; overhead ${overheadPerStep} ms/step; published: Hatchet ~31, Windmill ~52, Temporal ~74`,
    },
  ];
  return report(
    'sequential-steps',
    [
      { title: `5. ${LINEAR_STEPS} sequential steps: start → result per run (ms), concurrency 1`, rows },
      { title: '5. Ratios and per-step overhead', rows: ratios },
      { title: '5. Where a step goes: mean ms between the history events around each step (server timestamps)', rows: phases },
      { title: '5. Per step, next to published figures (different hardware: compare with care)', rows: published },
    ],
    summary,
    [
      "each step: one activity (benchStep, answers at once) on the same worker; the engine writes each transition from the next step's activity (started while Temporal dispatches it), and the run's start and end through local activities",
      'the "bare +" rows do on bare Temporal what the engine did per step before writing ahead (a local activity writing nothing, a state search-attribute upsert): what writing ahead saves',
      `95% interval: paired bootstrap over the ${n} rounds, one run per side each (bench/lib/stats.ts ratioInterval)`,
      "published figures: Windmill's competitor benchmark (40 light steps); its machines, versions and setup differ from this 2-core shared machine",
    ],
  );
}
