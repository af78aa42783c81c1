import type { z } from 'zod';
import { type FieldProblem, validationFailed } from './api-error';

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * Maps zod issues to `{field, rule, message}`, naming every failing field. A
 * field is "required" when the input lacks it, whatever message its schema chose.
 */
export function zodProblems(error: z.ZodError, input: unknown, prefix?: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const issue of error.issues) {
    const base = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ field: [...base, key].join('.'), rule: 'unknown_field', message: 'is not a field of this schema' });
      }
      continue;
    }
    const missing = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined;
    problems.push({
      field: base.join('.') || '(body)',
      rule: missing ? 'required' : ruleName(issue),
      message: missing ? 'is required' : issue.message,
    });
  }
  return problems;
}

function ruleName(issue: z.core.$ZodIssue): string {
  if (issue.code === 'too_big') return 'maximum';
  if (issue.code === 'too_small') return 'minimum';
  if (issue.code === 'invalid_format') return `format:${issue.format}`;
  return issue.code;
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(zodProblems(result.error, value, prefix));
  return result.data;
}
