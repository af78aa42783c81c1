import type { RunEvent } from '../events.js';
import { ValidationError, WorkflowEngineError, WorkflowFailedError } from '../errors.js';

/** One transition as a plain line: `seq 2  PENDING → EXECUTING (execute)  2026-…`. */
export function transitionLine(event: Extract<RunEvent, { type: 'transition' }>): string {
  return `seq ${event.seq}  ${event.from} → ${event.to} (${event.action})  ${event.at}`;
}

/** What a refusal or failure prints on stderr, naming every field a 422 lists. */
export function describeError(err: unknown): string {
  if (err instanceof WorkflowFailedError) {
    const fields = Object.entries(err.fields).map(([k, v]) => `  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    return [`run ${err.workflowId} failed: ${err.message}`, ...fields].join('\n');
  }
  if (err instanceof ValidationError) {
    return [
      `error: ${err.status} ${err.code}: ${err.message}`,
      ...err.fields.map((f) => `  - ${f.field}: ${f.message} (rule: ${f.rule})`),
    ].join('\n');
  }
  if (err instanceof WorkflowEngineError) return `error: ${err.status ? `${err.status} ` : ''}${err.code}: ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** The same, as JSON for --json. */
export function errorJson(err: unknown): Record<string, unknown> {
  if (err instanceof WorkflowFailedError) {
    return {
      workflow_id: err.workflowId,
      outcome: 'failed',
      error: { message: err.message, ...err.fields },
    };
  }
  if (err instanceof WorkflowEngineError)
    return { error: { status: err.status, code: err.code, message: err.message, details: err.details } };
  return { error: { message: err instanceof Error ? err.message : String(err) } };
}
