/** One failing field of a 422: the API names the field, the rule it broke and why. */
export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

/** Any refusal of the API, with the `{error: {code, message, details}}` body it answered. */
export class WorkflowEngineError extends Error {
  override name = 'WorkflowEngineError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details?: unknown,
    readonly headers?: Headers,
  ) {
    super(message);
  }
  /** The fields the details name (a 422's, a 400 invalid_cursor's); empty when they name none. */
  get fields(): FieldError[] {
    return Array.isArray(this.details) ? (this.details as FieldError[]) : [];
  }
}

export class ValidationError extends WorkflowEngineError {
  override name = 'ValidationError';
}
export class AuthenticationError extends WorkflowEngineError {
  override name = 'AuthenticationError';
}
export class PermissionError extends WorkflowEngineError {
  override name = 'PermissionError';
}
export class NotFoundError extends WorkflowEngineError {
  override name = 'NotFoundError';
}
export class ConflictError extends WorkflowEngineError {
  override name = 'ConflictError';
}
export class RateLimitError extends WorkflowEngineError {
  override name = 'RateLimitError';
  /** Seconds the API asked to wait (Retry-After), when it said. */
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}
export class ServiceUnavailableError extends WorkflowEngineError {
  override name = 'ServiceUnavailableError';
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}

/** The network failed or the API answered something that is not its error body. */
export class ConnectionError extends WorkflowEngineError {
  override name = 'ConnectionError';
}

/** A failure as a `failed` stream event carries it: the message, its type and every failure field (failure_type too). */
export interface RunFailure {
  message: string;
  failureType?: string;
  fields: Record<string, unknown>;
}

/** `wait()` on a run that ended FAILED (or CANCELLED). */
export class WorkflowFailedError extends Error {
  override name = 'WorkflowFailedError';
  constructor(
    readonly workflowId: string,
    readonly failure: RunFailure,
    readonly stateData: Record<string, unknown>,
  ) {
    super(failure.message);
  }
  get failureType(): string | undefined {
    return this.failure.failureType;
  }
  get fields(): Record<string, unknown> {
    return this.failure.fields;
  }
}

/** `wait({timeoutMs})` gave up before the run ended; the run goes on. */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
  constructor(
    readonly workflowId: string,
    readonly timeoutMs: number,
  ) {
    super(`run ${workflowId} did not end within ${timeoutMs} ms`);
  }
}

export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

const byStatus: Record<number, typeof WorkflowEngineError> = {
  400: ValidationError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  413: ValidationError,
  415: ValidationError,
  422: ValidationError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error for an API answer, from its status and its error body (text if it is not JSON). */
export function errorFromResponse(status: number, bodyText: string, headers?: Headers): WorkflowEngineError {
  let code = `http_${status}`;
  let message = bodyText.slice(0, 500) || `HTTP ${status}`;
  let details: unknown;
  try {
    const body = JSON.parse(bodyText) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    if (body?.error && typeof body.error === 'object') {
      if (typeof body.error.code === 'string') code = body.error.code;
      if (typeof body.error.message === 'string') message = body.error.message;
      details = body.error.details;
    }
  } catch {
    // Not the API's JSON error body (a proxy's page): keep the text.
  }
  const ErrorClass = byStatus[status] ?? WorkflowEngineError;
  return new ErrorClass(message, status, code, details, headers);
}
