import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../db/client';

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export interface Chunk {
  latenciesMs: number[];
  wallMs: number;
}

export interface Sample extends Chunk {
  label: string;
  /** sideBySide's: this side's chunk of each round, in order. */
  chunks?: Chunk[];
}

/** Several chunks as one: their calls pooled, their wall times added. */
export const pooled = (chunks: Chunk[]): Chunk => ({
  latenciesMs: chunks.flatMap((c) => c.latenciesMs),
  wallMs: chunks.reduce((t, c) => t + c.wallMs, 0),
});

/** Calls per second over the chunk's own wall time. */
const perSecond = (c: Chunk) => (c.latenciesMs.length / c.wallMs) * 1000;

export const summarize = (s: Sample) => ({
  label: s.label,
  n: s.latenciesMs.length,
  p50_ms: round(percentile(s.latenciesMs, 50)),
  p99_ms: round(percentile(s.latenciesMs, 99)),
  throughput_per_s: round(perSecond(s)),
});

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
export const ratio = (subject: number, baseline: number) => round(subject / baseline, 3);

/** Runs `task` n times with at most `concurrency` in flight; returns per-task latencies and wall time. */
export async function measure(label: string, n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<Sample> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await task(i);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  return { label, latenciesMs, wallMs: performance.now() - started };
}

export function printTable(title: string, rows: Array<Record<string, unknown>>): void {
  console.log(`\n## ${title}`);
  if (!rows.length) return;
  const columns = Object.keys(rows[0]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(columns.map((c) => String(r[c]))));
}

export function writeResult(name: string, result: unknown): string {
  const dir = path.join(projectRoot(), 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  // Results on Postgres are kept apart from those on the PGlite default.
  const file = path.join(dir, `${name}${process.env.DATABASE_URL ? '.postgres' : ''}.json`);
  fs.writeFileSync(file, JSON.stringify({ name, measured_at: new Date().toISOString(), ...(result as object) }, null, 2) + '\n');
  return file;
}

/** One call, timed here; or a whole chunk of calls, measured elsewhere (bench/lib/callers.ts). */
export type Side = { label: string; task: (i: number) => Promise<void> } | { label: string; chunk: (size: number, concurrency: number) => Promise<Sample> };

/**
 * Measures every side with the same n and concurrency, interleaved in `rounds` chunks whose order
 * alternates, so drift in the machine's load (other tenants, a backlog of runs) hits all sides alike.
 * Throughput is per side: its tasks over the wall time of its own chunks.
 */
export async function sideBySide(
  sides: Side[],
  n: number,
  concurrency: number,
  rounds: number,
  /** Awaited after each chunk, untimed: lets the work a chunk left behind finish before the next side's chunk. */
  settle?: () => Promise<void>,
): Promise<Sample[]> {
  const sideChunks = sides.map((): Chunk[] => []);
  const chunk = Math.ceil(n / rounds);
  for (let r = 0, done = 0; done < n; r++, done += chunk) {
    const size = Math.min(chunk, n - done);
    const order = sides.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      const offset = done;
      const side = sides[i];
      const s = 'chunk' in side ? await side.chunk(size, concurrency) : await measure(side.label, size, concurrency, (k) => side.task(offset + k));
      sideChunks[i].push({ latenciesMs: s.latenciesMs, wallMs: s.wallMs });
      await settle?.();
    }
  }
  return sides.map((side, i) => ({ label: side.label, ...pooled(sideChunks[i]), chunks: sideChunks[i] }));
}

export const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

export const p50Of = (chunks: Chunk[]) => percentile(pooled(chunks).latenciesMs, 50);

export const throughputOf = (chunks: Chunk[]) => perSecond(pooled(chunks));

/** The 2.5th and 97.5th percentiles of `resamples` draws of a bootstrap. */
function interval95(resamples: number, draw: () => number): [number, number] {
  const draws = Array.from({ length: resamples }, draw);
  return [round(percentile(draws, 2.5), 3), round(percentile(draws, 97.5), 3)];
}

const pickIndices = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * n));

/**
 * A 95% interval of statistic(subject) / statistic(baseline) from sideBySide's samples: a paired
 * bootstrap over its rounds. Whole rounds are resampled, not single calls, because the calls of a
 * chunk share the load of their moment, and in pairs because a round's chunks ran back to back
 * under the same load. Written here: general bootstrap helpers resample values, not paired groups
 * pooled before the statistic, and what is left is a loop. Unseeded: its bounds move in the third
 * decimal from one evaluation to the next.
 */
export function ratioInterval(subject: Sample, baseline: Sample, statistic: (chunks: Chunk[]) => number, resamples = 4000): [number, number] {
  const a = subject.chunks ?? [];
  const b = baseline.chunks ?? [];
  if (a.length !== b.length || a.length < 2) throw new Error(`ratioInterval: ${a.length} and ${b.length} rounds; needs sideBySide samples of 2 rounds or more`);
  return interval95(resamples, () => {
    const picks = pickIndices(a.length);
    return statistic(picks.map((i) => a[i])) / statistic(picks.map((i) => b[i]));
  });
}

/**
 * The same for two samples measured one after the other, each made of blocks of values that share
 * a moment (the deliveries of one second): each sample's blocks are resampled on their own, and
 * whole, since whatever delays one value of a block (a pause, a burst of other work) delays the
 * others.
 */
export function blockRatioInterval(subject: number[][], baseline: number[][], statistic: (values: number[]) => number, resamples = 1000): [number, number] {
  if (subject.length < 2 || baseline.length < 2) throw new Error(`blockRatioInterval: ${subject.length} and ${baseline.length} blocks; needs 2 or more each`);
  const draw = (blocks: number[][]) => statistic(pickIndices(blocks.length).flatMap((i) => blocks[i]));
  return interval95(resamples, () => draw(subject) / draw(baseline));
}

export const interval = ([low, high]: [number, number]) => `${low}–${high}`;
