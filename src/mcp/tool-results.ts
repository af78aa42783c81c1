import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FieldProblem } from '../../workflows/runtime/field-problems';
import { RunApiError } from './run-api-client';

/**
 * A successful tool answer: a sentence for the human, then the structured content serialized,
 * as the MCP spec recommends for clients that show the model text only.
 */
export function toolResult(summary: string, structuredContent: Record<string, unknown>): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(structuredContent) },
    ],
    structuredContent,
  };
}

/** An answer the agent should act on: `isError` with text that says what to change. */
export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The API names the header; the tool's argument is what the agent can change. */
const ARGUMENT_FOR_FIELD: Record<string, string> = { 'Idempotency-Key': 'idempotency_key' };

function isFieldProblems(details: unknown): details is FieldProblem[] {
  return Array.isArray(details) && details.every((d) => d && typeof d.field === 'string' && typeof d.rule === 'string');
}

/** One line per failing field with its rule, so an agent can correct each and call again. */
function fieldProblemsText(problems: FieldProblem[]): string {
  return problems.map((p) => `- ${ARGUMENT_FOR_FIELD[p.field] ?? p.field}: ${p.message} (rule: ${p.rule})`).join('\n');
}

/** A refused API call as a tool error: status, code, message and, for a 422, every field. */
export function apiErrorResult(err: RunApiError, what: string): CallToolResult {
  if (err.status === 422 && isFieldProblems(err.details)) {
    return toolError(`${what} was refused and changed nothing. Fix these fields and call ${what} again:\n${fieldProblemsText(err.details)}`);
  }
  return toolError(`${what} was refused: ${err.status} ${err.code}: ${err.message}`);
}

/**
 * The namespaces to look in for a type the agent misspelled, narrowest first:
 * `esign.resources.get-x` → `esign.resources.`, `esign.`, then everything.
 */
export function enclosingPrefixes(workflowType: string): string[] {
  const parts = workflowType.split('.').slice(0, -1);
  const prefixes = parts.map((_, i) => `${parts.slice(0, parts.length - i).join('.')}.`);
  return [...prefixes, ''];
}

/** Any error a tool call meets, as the agent should read it; unexpected ones keep their message. */
export function unexpectedErrorResult(err: unknown, what: string, apiBase: string): CallToolResult {
  if (err instanceof RunApiError) return apiErrorResult(err, what);
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  // undici's fetch says so when no answer came (refused, reset, DNS); any other TypeError is a fault of ours.
  if (err instanceof TypeError && err.message === 'fetch failed' && cause) {
    return toolError(`${what} failed: the API at ${apiBase} could not be reached (${cause.code ?? cause.message})`);
  }
  return toolError(`${what} failed: ${err instanceof Error ? err.message : String(err)}`);
}
