import { readFileSync } from 'node:fs';

/** A command line the user got wrong: exit code 2, like commander's own usage errors. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `--data @file.json` or `--data '{…}'`: a JSON object, else a UsageError saying why. */
export function parseData(value: string, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): Record<string, unknown> {
  let text = value;
  let source = '--data';
  if (value.startsWith('@')) {
    source = value.slice(1);
    try {
      text = readFile(source);
    } catch (err) {
      throw new UsageError(`--data: cannot read ${source}: ${(err as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data: ${source === '--data' ? 'the value' : source} is not JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--data: must be a JSON object');
  return parsed as Record<string, unknown>;
}

const STATUSES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;

export function parseStatus(value: string): (typeof STATUSES)[number] {
  const upper = value.toUpperCase();
  if (!(STATUSES as readonly string[]).includes(upper)) throw new UsageError(`--status: one of ${STATUSES.join(', ')}`);
  return upper as (typeof STATUSES)[number];
}

export function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError('--limit: a positive integer');
  return n;
}
