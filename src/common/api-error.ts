import type { FieldProblem } from '../../workflows/runtime/field-problems';

export type { FieldProblem };

/** An error the API answers with as `{error: {code, message, details}}` and the given status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}


export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

export const validationFailed = (problems: FieldProblem[]) =>
  new ApiError(
    422,
    'validation_failed',
    problems.map((p) => `${p.field}: ${p.message}`).join('; '),
    problems,
  );
