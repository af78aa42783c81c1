import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * What a log line says about an error: its kind, its code, where it was thrown and, for a failed
 * query, the SQL with its placeholders. Never the message: a query error's message lists the
 * bound values, and database and parser messages quote the input they refused.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.constructor.name,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(error instanceof DrizzleQueryError ? { query: error.query } : {}),
    at: error.stack?.split('\n').filter((line) => /^\s+at /.test(line)).map((line) => line.trim()),
    ...(error.cause !== undefined ? { cause: loggableError(error.cause) } : {}),
  };
}
