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

export interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);

export const validationFailed = (problems: FieldProblem[]) =>
  new ApiError(
    422,
    'validation_failed',
    problems.map((p) => `${p.field}: ${p.message}`).join('; '),
    problems,
  );
