import type { z } from 'zod';
import { type FieldProblem, validationFailed } from './api-error';

/** Maps zod issues to `{field, rule, message}`, naming every failing field. */
export function zodProblems(error: z.ZodError, prefix?: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const issue of error.issues) {
    const base = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ field: [...base, key].join('.'), rule: 'unknown_field', message: 'is not a field of this schema' });
      }
      continue;
    }
    const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
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
  if (!result.success) throw validationFailed(zodProblems(result.error, prefix));
  return result.data;
}
