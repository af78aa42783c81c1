/**
 * The benchmark's workflow bundle: the engine's workflows plus baselines that
 * do the same work on bare Temporal, and a 40-step Linear definition that
 * only the benchmark registers.
 */
import { proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { z } from 'zod';
import type { EsignActivities } from '../activities/esign';
import { SA_STATE } from '../workflows/constants';
import type { ProjectionActivities } from '../workflows/runtime/contract';
import { ANY_STATE, defineWorkflow, type StateSpec, type TransitionSpec } from '../workflows/runtime/definition';
import { makeWorkflow } from '../workflows/runtime/engine';

export * from '../workflows';

export interface BenchActivities {
  benchStep(input: { step: number }): Promise<number>;
}

const { benchStep } = proxyActivities<BenchActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 3 } });

/**
 * Baseline for the projection's cost: the same provider call, no state machine, no projection.
 * Its options load when it runs, as an esign run's definition does (workflows/registry.ts).
 */
export async function bareEsignGet(input: { base_url: string }): Promise<unknown> {
  const { esignActivityOptions } = require('../workflows/esign/api-root') as typeof import('../workflows/esign/api-root');
  return proxyActivities<EsignActivities>(esignActivityOptions).esignRequest({ organization_uuid: 'org_bench', base_url: input.base_url, method: 'GET', path: '/v2.1', token_required: false });
}

/** Baseline for sequential steps: the same activities one after another. */
export async function bareSteps(input: { steps: number }): Promise<number> {
  let last = 0;
  for (let step = 1; step <= input.steps; step++) last = await benchStep({ step });
  return last;
}

/** Run on the queue whose projection writes nothing: what a local activity per step costs, without its write. */
const { projectTransition: emptyLocalActivity } = proxyLocalActivities<ProjectionActivities>({ startToCloseTimeout: '15s' });

/**
 * bareSteps plus, after each step, what the engine asks of Temporal per transition: a local
 * activity (the projection's, writing nothing) and/or an upsert of the state search attribute.
 * Splits the engine's overhead into Temporal's share and the engine's own.
 */
export async function bareStepsWith(input: { steps: number; local_activity: boolean; search_attribute: boolean }): Promise<number> {
  let last = 0;
  for (let step = 1; step <= input.steps; step++) {
    last = await benchStep({ step });
    if (input.local_activity) await emptyLocalActivity({} as Parameters<ProjectionActivities['projectTransition']>[0]);
    if (input.search_attribute) upsertSearchAttributes([{ key: SA_STATE, value: `step_${step}` }]);
  }
  return last;
}

export const LINEAR_STEPS = 40;

const states: Record<string, StateSpec> = { completed: { terminal: true, success: true }, failed: { terminal: true } };
const transitions: TransitionSpec[] = [{ from: ANY_STATE, action: 'fail', to: 'failed' }];
const actions: Record<string, () => Promise<{ patch: Record<string, unknown> }>> = {};
for (let step = 1; step <= LINEAR_STEPS; step++) {
  const from = `step_${step}`;
  const to = step === LINEAR_STEPS ? 'completed' : `step_${step + 1}`;
  states[from] = { initial: step === 1, auto_advance: `do_${step}` };
  transitions.push({ from, action: `do_${step}`, to });
  actions[`do_${step}`] = async () => ({ patch: { last_step: await benchStep({ step }) } });
}

export const linear40Definition = defineWorkflow({
  workflow_type: 'bench.linear-40',
  version: '1.0',
  kind: 'Linear',
  description: 'benchmark: 40 light sequential steps',
  input: z.object({}),
  output: z.object({}),
  states,
  transitions,
  exposed_to_end_users: false,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_action',
  actions,
});

export const benchLinear40 = makeWorkflow(linear40Definition);
export { benchLinear40 as 'bench.linear-40' };

/**
 * For stream delivery: `ticks` transitions, one every `interval_ms` on a durable timer after a
 * lead time, so SSE clients can connect first and then receive every later transition live.
 */
const tickerInput = z.object({ ticks: z.number().int().min(1), interval_ms: z.number().int().min(1), lead_ms: z.number().int().min(0) });
type TickerData = z.output<typeof tickerInput> & { tick?: number };

export const tickerDefinition = defineWorkflow({
  workflow_type: 'bench.ticker',
  version: '1.0',
  kind: 'Linear',
  description: 'benchmark: a transition every interval_ms',
  input: tickerInput,
  output: z.object({}),
  states: {
    pending: { initial: true, auto_advance: 'start' },
    ticking: {},
    completed: { terminal: true, success: true },
    failed: { terminal: true },
  },
  transitions: [
    { from: 'pending', action: 'start', to: 'ticking' },
    { from: 'ticking', action: 'tick', to: 'ticking' },
    { from: 'ticking', action: 'finish', to: 'completed' },
    { from: ANY_STATE, action: 'fail', to: 'failed' },
  ],
  exposed_to_end_users: false,
  prerequisites: [],
  secret_fields: [],
  outbound_url_fields: [],
  failure_stamp: 'failed_action',
  actions: {
    async start(data) {
      const d = data as TickerData;
      return { patch: { tick: 0 }, schedule: { action: 'tick', delay_seconds: d.lead_ms / 1000 } };
    },
    async tick(data) {
      const d = data as TickerData;
      const tick = (d.tick ?? 0) + 1;
      const schedule = tick >= d.ticks ? { action: 'finish', delay_seconds: 0 } : { action: 'tick', delay_seconds: d.interval_ms / 1000 };
      return { patch: { tick }, schedule };
    },
    async finish() {
      return {};
    },
  },
});

export const benchTicker = makeWorkflow(tickerDefinition);
export { benchTicker as 'bench.ticker' };
