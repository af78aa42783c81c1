import { printTable, writeResult } from './stats';

/** One line of the combined table (README's Performance section): subject against its baseline. */
export interface SummaryLine {
  benchmark: string;
  metric: string;
  subject: string;
  baseline: string;
  ratio: number | string;
  /** The ratio's 95% interval where the benchmark has the rounds for one (stats.ts ratioInterval). */
  interval?: string;
  target: string;
}

export interface BenchOutcome {
  name: string;
  summary: SummaryLine[];
  notes: string[];
}

/** Prints a benchmark's tables, writes bench/results/<name>.json, returns its summary lines. */
export function report(
  name: string,
  tables: Array<{ title: string; rows: Array<Record<string, unknown>> }>,
  summary: SummaryLine[],
  notes: string[],
  extra: Record<string, unknown> = {},
): BenchOutcome {
  for (const t of tables) printTable(t.title, t.rows);
  for (const n of notes) console.log(`- ${n}`);
  const file = writeResult(name, { tables, summary, notes, ...extra });
  console.log(`(written to ${file})`);
  return { name, summary, notes };
}

export const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : 'n/a');
export const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
