/**
 * `make bench`: runs the benchmarks (all, or those named: start projection stream reads steps
 * longpoll), prints a table each, writes bench/results/<name>.json, and ends with the combined
 * table (also bench/results/summary.md, what README's Performance section shows).
 *
 * Knobs: BENCH_SCALE (multiplies every N; default 1: about 7 minutes on 2 cores), DATABASE_URL
 * (Postgres; unset: PGlite), BENCH_READS_LARGE, BENCH_SSE_CLIENTS / _RUNS / _TICKS / _INTERVAL_MS,
 * BENCH_LONGPOLL_INTERVALS, BENCH_LOG_LEVEL, BENCH_KEEP=1 (keep the scratch directory and its logs),
 * RUN_THREADS_NICE (as `main.js all` takes it: the runs' threads at a lower priority).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../db/client';
import { longPoll } from './long-poll';
import { projectionCost } from './projection-cost';
import { reads } from './reads';
import type { BenchOutcome, SummaryLine } from './lib/report';
import { bundleBenchWorkflows, removeScratch, SCALE, scratchDir, startStack, temporalWarnings, type BenchStack } from './lib/stack';
import { printTable } from './lib/stats';
import { sequentialSteps } from './sequential-steps';
import { startOverhead } from './start-overhead';
import { streamDelivery } from './stream-delivery';

const ALL = ['start', 'projection', 'stream', 'reads', 'steps', 'longpoll'] as const;
type Name = (typeof ALL)[number];

const onStack: Record<Exclude<Name, 'longpoll'>, (stack: BenchStack) => Promise<BenchOutcome>> = {
  start: startOverhead,
  projection: projectionCost,
  stream: streamDelivery,
  reads,
  steps: sequentialSteps,
};

function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** The command line that reproduces this run. */
function command(asked: string[]): string {
  const env = [process.env.DATABASE_URL ? 'DATABASE_URL=postgres://…' : '', SCALE !== 1 ? `BENCH_SCALE=${SCALE}` : ''].filter(Boolean);
  return [...env, 'make bench', asked.length ? `BENCH="${asked.join(' ')}"` : ''].filter(Boolean).join(' ');
}

async function main() {
  const asked = process.argv.slice(2);
  for (const a of asked) if (!ALL.includes(a as Name)) throw new Error(`unknown benchmark ${a}: use ${ALL.join(', ')}`);
  const selected = (asked.length ? asked : [...ALL]) as Name[];
  const database = process.env.DATABASE_URL ? 'Postgres (DATABASE_URL)' : 'PGlite';
  const startedAt = new Date();
  console.log(`bench: ${selected.join(', ')} on ${database}, BENCH_SCALE=${SCALE}; ${machine()}; scratch ${scratchDir}`);

  const outcomes: BenchOutcome[] = [];
  const warnings: string[] = [];
  const t0 = performance.now();
  const stackNames = selected.filter((n): n is Exclude<Name, 'longpoll'> => n !== 'longpoll');
  let bundle: { code: string } | undefined;
  if (stackNames.length) {
    const stack = await startStack();
    bundle = stack.workflowBundle;
    try {
      // Warm-up: the first runs pay for JIT, connection set-up and workflow-bundle loading.
      console.log('bench: warming up');
      const warm: string[] = [];
      for (let i = 0; i < 20; i++) {
        const id = `wf_warmup_${i}_${Date.now().toString(36)}`;
        await stack.startDirect('esign.resources.get-resource-information', id, { base_url: stack.esignUrl });
        warm.push(id);
      }
      await stack.client.workflow.execute('bench.linear-40', stack.startOptions('bench.linear-40', `wf_warmup_lin_${Date.now().toString(36)}`, {}));
      await stack.waitTerminal(warm);
      for (const name of stackNames) {
        const b0 = performance.now();
        console.log(`\nbench: ${name} …`);
        const before = new Map(temporalWarnings);
        outcomes.push(await onStack[name](stack));
        console.log(`bench: ${name} took ${((performance.now() - b0) / 1000).toFixed(0)} s`);
        const seen = [...temporalWarnings].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
        if (seen.length) {
          const text = seen.map(([k, v]) => `${v} × "${k}"`).join('; ');
          console.log(`bench: Temporal warnings during ${name}: ${text}`);
          warnings.push(`${name}: ${text}`);
        }
      }
    } finally {
      await stack.close();
    }
  }
  if (selected.includes('longpoll')) {
    const b0 = performance.now();
    console.log('\nbench: longpoll …');
    outcomes.push(await longPoll(bundle ?? (await bundleBenchWorkflows())));
    console.log(`bench: longpoll took ${((performance.now() - b0) / 1000).toFixed(0)} s`);
  }

  const lines: SummaryLine[] = outcomes.flatMap((o) => o.summary);
  const totalS = Math.round((performance.now() - t0) / 1000);
  const header = `${startedAt.toISOString().slice(0, 10)}, ${database}, BENCH_SCALE=${SCALE}, ${machine()}, ${totalS} s`;
  // One row per summary line, for the printed table and the Markdown one alike.
  const rows = lines.map((l) => ({
    Benchmark: l.benchmark,
    Metric: l.metric,
    Subject: l.subject,
    Baseline: l.baseline,
    Ratio: l.ratio,
    '95% interval': l.interval ?? '',
    Target: l.target,
  }));
  printTable(`Summary (${header})`, rows);
  const mdRow = (cells: unknown[]) => `| ${cells.join(' | ')} |`;
  const columns = Object.keys(rows[0] ?? {});
  const md = [
    `Measured ${header}; command: \`${command(asked)}\``,
    '',
    mdRow(columns),
    mdRow(columns.map(() => '---')),
    ...rows.map((r) => mdRow(Object.values(r))),
    '',
    ...(warnings.length ? ['Temporal warnings (worker log) during the run:', '', ...warnings.map((w) => `- ${w}`), ''] : []),
  ].join('\n');
  if (selected.length === ALL.length) {
    // Only a full run replaces the summary README's Performance section shows.
    const file = path.join(projectRoot(), 'bench', 'results', `summary${process.env.DATABASE_URL ? '.postgres' : ''}.md`);
    fs.writeFileSync(file, md);
    console.log(`\nbench: done in ${totalS} s; summary in ${path.relative(projectRoot(), file)}`);
  } else {
    console.log(`\nbench: done in ${totalS} s`);
  }
}

main()
  .then(() => {
    removeScratch();
    process.exit(0);
  })
  .catch((err) => {
    console.error(err);
    console.error('bench: failed; logs kept in the scratch directory printed above (BENCH_KEEP=1 keeps them on success too)');
    process.exit(1);
  });
