import type { z } from 'zod';

/** One failing input field: what the API's 422 lists and what an invalid direct start's failure_reason says. */
export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function ruleName(issue: z.core.$ZodIssue): string {
  if (issue.code === 'too_big') return 'maximum';
  if (issue.code === 'too_small') return 'minimum';
  if (issue.code === 'invalid_format') return `format:${issue.format}`;
  // A refinement names its rule in params: "custom" would tell the caller nothing.
  if (issue.code === 'custom' && typeof issue.params?.rule === 'string') return issue.params.rule;
  return issue.code;
}

/**
 * Maps zod issues to `{field, rule, message}`, naming every failing field. A
 * field is "required" when the input lacks it, whatever message its schema chose.
 */
export function fieldProblems(error: Pick<z.ZodError, 'issues'>, input: unknown, prefix?: string): FieldProblem[] {
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
