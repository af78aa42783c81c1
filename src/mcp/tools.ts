import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { definition, prerequisites, run, startResult, transition, typeList, typeSchema } from '../openapi/run-schemas';
import { IDEMPOTENCY_KEY, startBodySchema } from '../runs/start-body';
import { RunApiClient, RunApiError } from './run-api-client';
import { enclosingPrefixes, toolError, toolResult, unexpectedErrorResult } from './tool-results';
import { watchOutcome, watchRun } from './watch';

/** Long enough for most runs, short enough for clients' usual 60 s request time-out. */
const WATCH_DEFAULT_SECONDS = 30;
const WATCH_MAX_SECONDS = 600;

const INSTRUCTIONS = [
  'Runs typed workflows (provider operations such as e-signature or database-host calls) as durable state machines.',
  'The loop: list_workflow_types → get_workflow_schema → start_workflow → watch_workflow;',
  'on a failed run, fix the cause and retry_workflow, or start a new run with corrected input.',
].join(' ');

const workflowId = z.string().min(1).max(200).describe('The run id start_workflow returned (wf_…)');
const workflowType = startBodySchema.shape.workflow_type.describe(
  'A workflow_type from list_workflow_types, e.g. esign.resources.get-resource-information',
);

const schemaAnswer = z.object({
  workflow_type: z.string(),
  ...typeSchema.shape,
  definition,
  prerequisites: prerequisites
    .optional()
    .describe('Present when has_prerequisites: what must exist (e.g. a connection) before a run can succeed'),
});
const startAnswer = startResult.extend({ replayed: z.boolean().describe('true when idempotency_key matched an earlier identical start') });
const history = z.object({ workflow_id: z.string(), transitions: z.array(transition) });

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const isNotFound = (err: unknown) => err instanceof RunApiError && err.status === 404;

const runUrl = (id: string) => `/workflows/${encodeURIComponent(id)}`;
const typeUrl = (type: string) => `/workflows/types/${encodeURIComponent(type)}`;

/**
 * The agent tools, on top of the run API: one McpServer per connection (stdio) or per request
 * (stateless Streamable HTTP), each talking to the API with its caller's token.
 */
export function createMcpServer(api: RunApiClient): McpServer {
  const server = new McpServer({ name: 'workflow-engine', version: '0.1.0' }, { instructions: INSTRUCTIONS });

  /** Every tool's errors become results the agent can read; a tool handler never throws. */
  const guarded =
    <A>(what: string, handler: (args: A, extra: ToolExtra) => Promise<CallToolResult>) =>
    async (args: A, extra: ToolExtra) => {
      try {
        return await handler(args, extra);
      } catch (err) {
        return unexpectedErrorResult(err, what, api.base);
      }
    };

  server.registerTool(
    'list_workflow_types',
    {
      title: 'List workflow types',
      description:
        'Lists the workflow types this service can run, with their description, kind (Atomic, Linear, Dag) and ' +
        'has_prerequisites (true: a connection must exist first, see get_workflow_schema), and the namespaces with counts. ' +
        'Start here to find the workflow_type for a task; narrow with prefix (e.g. "esign." or "dbhost.").',
      inputSchema: {
        prefix: z.string().max(200).optional().describe('Only types whose workflow_type starts with this, e.g. "esign."'),
      },
      outputSchema: typeList,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('list_workflow_types', async ({ prefix }) => {
      const types = typeList.parse(await api.get('/workflows/types', { prefix }));
      const lines = types.types.map(
        (t) => `- ${t.workflow_type} (${t.kind}${t.has_prerequisites ? ', needs a connection' : ''}): ${t.description}`,
      );
      return toolResult(`${types.types.length} workflow type(s)${prefix ? ` under "${prefix}"` : ''}:\n${lines.join('\n')}`, types);
    }),
  );

  server.registerTool(
    'get_workflow_schema',
    {
      title: 'Get a workflow type schema',
      description:
        'Returns what start_workflow needs for one workflow type: input_schema (JSON Schema 2020-12 of initial_data; ' +
        'unknown fields are refused), output_schema (the state_data a completed run returns), the definition ' +
        '(states and transitions of its state machine) and, when has_prerequisites, the connections it needs. ' +
        'Call it before start_workflow.',
      inputSchema: { workflow_type: workflowType },
      outputSchema: schemaAnswer,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('get_workflow_schema', async ({ workflow_type }) => {
      let schemas: unknown;
      let def: unknown;
      try {
        [schemas, def] = await Promise.all([api.get(`${typeUrl(workflow_type)}/schema`), api.get(typeUrl(workflow_type))]);
      } catch (err) {
        if (isNotFound(err)) return unknownType('get_workflow_schema', workflow_type);
        throw err;
      }
      const answer = schemaAnswer.parse({
        workflow_type,
        ...typeSchema.parse(schemas),
        definition: definition.parse(def),
        prerequisites: (schemas as { has_prerequisites: boolean }).has_prerequisites
          ? await api.get(`${typeUrl(workflow_type)}/prerequisites`)
          : undefined,
      });
      const summary = [
        `${workflow_type} (${answer.definition.kind}): ${answer.definition.description}`,
        `initial_data requires: ${requiredFields(answer.input_schema)}; see input_schema for every field.`,
        `States: ${answer.definition.states.map((s) => s.name).join(', ')}.`,
        ...(answer.prerequisites ? [`Prerequisites: ${answer.prerequisites.steps.join(' ')}`] : []),
      ];
      return toolResult(summary.join('\n'), answer);
    }),
  );

  server.registerTool(
    'start_workflow',
    {
      title: 'Start a workflow run',
      description:
        'Starts a run of workflow_type with initial_data (an object matching the input_schema from get_workflow_schema) ' +
        'and returns its workflow_id and state_name at once, before the run has done anything; follow it with watch_workflow. ' +
        'If initial_data is invalid, nothing starts and the error names every failing field and rule: correct them and call again. ' +
        'Pass an idempotency_key to make a repeated call (after a time-out, say) return the same run instead of starting another.',
      inputSchema: {
        workflow_type: workflowType,
        initial_data: startBodySchema.shape.initial_data.describe('The run input, as input_schema of get_workflow_schema describes'),
        idempotency_key: z
          .string()
          .regex(IDEMPOTENCY_KEY, 'must be 1-255 printable ASCII characters')
          .optional()
          .describe('1-255 printable ASCII characters; the same key with the same input returns the same run for 24 h'),
      },
      outputSchema: startAnswer,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    guarded('start_workflow', async ({ workflow_type, initial_data, idempotency_key }) => {
      try {
        const { body, headers } = await api.post(
          '/workflows/start',
          { workflow_type, initial_data },
          idempotency_key === undefined ? {} : { 'idempotency-key': idempotency_key },
        );
        const answer = startAnswer.parse({ ...startResult.parse(body), replayed: headers.get('idempotent-replayed') === 'true' });
        return toolResult(
          `Started ${answer.workflow_id} (${workflow_type}), state ${answer.state_name}${answer.replayed ? ' (the run this idempotency_key started earlier)' : ''}. ` +
            `Call watch_workflow {"workflow_id": "${answer.workflow_id}"} to wait for its result.`,
          answer,
        );
      } catch (err) {
        if (isNotFound(err)) return unknownType('start_workflow', workflow_type);
        throw err;
      }
    }),
  );

  /** An unknown type names the types that do exist in the narrowest namespace that has any. */
  async function unknownType(what: string, type: string): Promise<CallToolResult> {
    for (const prefix of enclosingPrefixes(type)) {
      const { types } = typeList.parse(await api.get('/workflows/types', { prefix: prefix || undefined }));
      if (!types.length) continue;
      const where = prefix ? `under "${prefix}"` : 'in all';
      return toolError(
        `${what} was refused: workflow type "${type}" does not exist. Types ${where}: ${types.map((t) => t.workflow_type).join(', ')}.`,
      );
    }
    return toolError(`${what} was refused: workflow type "${type}" does not exist, and this service has no workflow types.`);
  }

  server.registerTool(
    'watch_workflow',
    {
      title: 'Wait for a workflow run',
      description:
        'Waits for a run to end and returns its result: outcome "completed" with state_data, or "failed" with error ' +
        '(message, failure_type, failed_step) and a hint (retry_workflow re-drives a failed run once its cause is fixed), ' +
        'or "running" with the current state_name when timeout_seconds pass first (call it again to keep waiting). ' +
        'Sends a progress notification per state transition when the request carries a progressToken. ' +
        'Keep timeout_seconds below your client\'s request time-out.',
      inputSchema: {
        workflow_id: workflowId,
        timeout_seconds: z
          .int()
          .min(1)
          .max(WATCH_MAX_SECONDS)
          .optional()
          .describe(`How long to wait at most, in seconds (default ${WATCH_DEFAULT_SECONDS}, at most ${WATCH_MAX_SECONDS})`),
      },
      outputSchema: watchOutcome,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('watch_workflow', async ({ workflow_id, timeout_seconds }, extra) => {
      const progressToken = extra._meta?.progressToken;
      const outcome = await watchRun(api, workflow_id, {
        timeoutMs: (timeout_seconds ?? WATCH_DEFAULT_SECONDS) * 1000,
        signal: extra.signal,
        onTransition: async (t) => {
          if (progressToken === undefined) return;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: t.seq, message: `${t.from} → ${t.to} (${t.action})` },
          });
        },
      });
      const summary = {
        completed: `${workflow_id} completed in state ${outcome.state_name}.`,
        failed: `${workflow_id} failed: ${outcome.error?.message} (failure_type ${outcome.error?.failure_type ?? 'unknown'}, failed_step ${outcome.error?.failed_step ?? 'unknown'}). ${outcome.hint}`,
        running: `${workflow_id} is still running, in state ${outcome.state_name}. Call watch_workflow again to keep waiting.`,
      }[outcome.outcome];
      return toolResult(summary, watchOutcome.parse(outcome));
    }),
  );

  server.registerTool(
    'get_workflow',
    {
      title: 'Get a workflow run',
      description:
        'Returns a run as it is now, without waiting: state_name, status (RUNNING, COMPLETED, FAILED, CANCELLED), attempt and, ' +
        'once terminal, state_data. Use it to check on a run you are not watching; use watch_workflow to wait for one.',
      inputSchema: { workflow_id: workflowId },
      outputSchema: run,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('get_workflow', async ({ workflow_id }) => {
      const view = run.parse(await api.get(runUrl(workflow_id)));
      return toolResult(`${view.workflow_id} (${view.workflow_type}) is ${view.status}, in state ${view.state_name}, attempt ${view.attempt}.`, view);
    }),
  );

  server.registerTool(
    'get_workflow_history',
    {
      title: 'Get a workflow run history',
      description:
        'Returns every transition of a run in order (seq, from, to, action, at, attempt, data), across retries. ' +
        'Use it to see which step failed and with what data before deciding to retry.',
      inputSchema: { workflow_id: workflowId },
      outputSchema: history,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('get_workflow_history', async ({ workflow_id }) => {
      const answer = history.parse(await api.get(`${runUrl(workflow_id)}/history`));
      const lines = answer.transitions.map((t) => `${t.seq}. ${t.from} → ${t.to} (${t.action}, attempt ${t.attempt})`);
      return toolResult(`${answer.transitions.length} transition(s) of ${workflow_id}:\n${lines.join('\n')}`, answer);
    }),
  );

  server.registerTool(
    'retry_workflow',
    {
      title: 'Retry a failed workflow run',
      description:
        'Re-drives a FAILED or CANCELLED run from its last good state, under the same workflow_id (attempt + 1, its history continues). ' +
        'Use it once the cause of the failure is fixed (a token, a connection, the provider is back); then watch_workflow again. ' +
        'Refused for a run that is neither FAILED nor CANCELLED, or whose input was invalid (start a new run then).',
      inputSchema: { workflow_id: workflowId },
      outputSchema: startResult,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    guarded('retry_workflow', async ({ workflow_id }) => {
      const answer = startResult.parse((await api.post(`${runUrl(workflow_id)}/retry`)).body);
      return toolResult(
        `Retrying ${answer.workflow_id} from state ${answer.state_name}. Call watch_workflow {"workflow_id": "${answer.workflow_id}"} to wait for it.`,
        answer,
      );
    }),
  );

  return server;
}

/** The fields an input must carry, in words: `required`, plus one of each `anyOf` alternative ("base_url or connection_uuid"). */
function requiredFields(schema: Record<string, unknown>): string {
  const always = (schema.required as string[] | undefined) ?? [];
  const alternatives = ((schema.anyOf as Array<{ required?: string[] }> | undefined) ?? [])
    .map((branch) => branch.required ?? [])
    .filter((fields) => fields.length);
  const oneOf = alternatives.length ? [alternatives.map((fields) => fields.join(' and ')).join(' or ')] : [];
  const all = [...always, ...oneOf];
  return all.length ? all.join(', ') : 'nothing';
}
