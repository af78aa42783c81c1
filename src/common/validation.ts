import type { z } from 'zod';
import { fieldProblems } from '../../workflows/runtime/field-problems';
import { validationFailed } from './api-error';

export { fieldProblems as zodProblems };

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(fieldProblems(result.error, value, prefix));
  return result.data;
}
