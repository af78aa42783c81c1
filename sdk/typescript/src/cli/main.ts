import { Command, CommanderError, Option } from 'commander';
import { WorkflowEngine } from '../client.js';
import { writeBindings } from '../generate/generate.js';
import type { Run } from '../types.js';
import { parseData, parseLimit, parseStatus, UsageError } from './input.js';
import { describeError, errorJson, transitionLine } from './render.js';
import { watchRun } from './watch.js';

interface GlobalOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/** Exit codes: 0 done (a watched run completed), 1 the API refused or the run failed, 2 usage. */
export async function main(argv: string[]): Promise<number> {
  const out = process.stdout;
  const program = new Command('wfe')
    .description('The Workflow Engine from the command line')
    .addOption(new Option('--url <url>', 'API origin').env('WFE_URL'))
    .addOption(new Option('--token <token>', 'bearer token').env('WFE_TOKEN'))
    .option('--json', 'machine-readable output')
    .exitOverride()
    .showHelpAfterError();

  let code = 0;
  const globals = () => program.opts<GlobalOptions>();
  const engine = () => {
    const { url, token } = globals();
    if (!url) throw new UsageError('the API URL is missing: --url or WFE_URL');
    if (!token) throw new UsageError('the token is missing: --token or WFE_TOKEN');
    return new WorkflowEngine({ baseUrl: url, token });
  };
  const print = (value: unknown, human: () => string): void =>
    void out.write(`${globals().json ? JSON.stringify(value, null, 2) : human()}\n`);
  const watch = async (workflowId: string) => {
    const stateData = await watchRun(engine().workflows.handle(workflowId), { json: Boolean(globals().json), out });
    if (globals().json) out.write(`${JSON.stringify({ workflow_id: workflowId, outcome: 'completed', state_data: stateData })}\n`);
  };

  program
    .command('types [prefix]')
    .description('list the workflow types (under a prefix)')
    .action(async (prefix?: string) => {
      const list = await engine().catalog.listTypes({ prefix });
      print(list, () => list.types.map((t) => `${t.workflow_type}  ${t.version}  ${t.kind}  ${t.description}`).join('\n'));
    });

  program
    .command('schema <type>')
    .description("a type's input and output JSON Schemas")
    .action(async (type: string) => {
      out.write(`${JSON.stringify(await engine().catalog.getSchema(type), null, 2)}\n`);
    });

  program
    .command('start <type>')
    .description('start a run')
    .requiredOption('--data <json>', "initial_data: '{…}' or @file.json")
    .option('--idempotency-key <key>', 'the same key and data return the same run')
    .option('--watch', 'follow the run to its end')
    .action(async (type: string, options: { data: string; idempotencyKey?: string; watch?: boolean }) => {
      const data = parseData(options.data);
      const handle = await engine().workflows.start(type, data, { idempotencyKey: options.idempotencyKey });
      if (!options.watch) return print({ workflow_id: handle.workflowId, replayed: handle.replayed }, () => handle.workflowId);
      if (!globals().json) out.write(`${handle.workflowId}\n`);
      await watch(handle.workflowId);
    });

  program
    .command('watch <id>')
    .description('follow a run: exit 0 when it completes, 1 when it fails')
    .action(async (id: string) => watch(id));

  program
    .command('get <id>')
    .description('a run')
    .action(async (id: string) => {
      const run = await engine().workflows.get(id);
      print(run, () => [runLine(run), ...(run.state_data ? [JSON.stringify(run.state_data, null, 2)] : [])].join('\n'));
    });

  program
    .command('history <id>')
    .description("a run's transitions")
    .action(async (id: string) => {
      const history = await engine().workflows.history(id);
      print(history, () => history.transitions.map((t) => transitionLine({ type: 'transition', ...t })).join('\n'));
    });

  program
    .command('retry <id>')
    .description('re-drive a FAILED run from its last good state')
    .option('--watch', 'follow the run to its end')
    .action(async (id: string, options: { watch?: boolean }) => {
      const result = await engine().workflows.retry(id);
      if (!options.watch) return print(result, () => `${result.workflow_id} retried (${result.state_name})`);
      await watch(id);
    });

  program
    .command('cancel <id>')
    .description('ask a running run to stop')
    .action(async (id: string) => {
      const result = await engine().workflows.cancel(id);
      print(result, () => `${result.workflow_id} cancel requested`);
    });

  program
    .command('runs')
    .description("the organization's runs, newest first")
    .option('--type <type>', 'only this workflow type')
    .option('--status <status>', 'RUNNING, COMPLETED, FAILED or CANCELLED', parseStatus)
    .option('--schedule <id>', 'only the runs this schedule started')
    .option('--limit <n>', 'how many', parseLimit, 20)
    .action(async (options: { type?: string; status?: Run['status']; schedule?: string; limit: number }) => {
      const runs: Run[] = [];
      const list = await engine().workflows.list({
        workflow_type: options.type,
        status: options.status,
        schedule_id: options.schedule,
        limit: Math.min(options.limit, 100),
      });
      for await (const run of list) {
        runs.push(run);
        if (runs.length >= options.limit) break;
      }
      print({ runs }, () => runs.map(runLine).join('\n'));
    });

  program
    .command('generate')
    .description('write typed start functions for every workflow type of the catalog')
    .requiredOption('--out <dir>', 'directory for index.ts')
    .option('--prefix <prefix>', 'only the types under this prefix')
    .option('--sdk-import <module>', 'where the bindings import the SDK from', '@workflow-engine/sdk')
    .action(async (options: { out: string; prefix?: string; sdkImport: string }) => {
      const file = await writeBindings(engine(), options.out, { prefix: options.prefix, sdkImport: options.sdkImport });
      print({ file }, () => `wrote ${file}`);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    code = exitCode(err);
    if (err instanceof CommanderError) return code;
    if (globals().json) process.stderr.write(`${JSON.stringify(errorJson(err))}\n`);
    else process.stderr.write(`${describeError(err)}\n`);
  }
  return code;
}

function runLine(run: Run): string {
  return `${run.workflow_id}  ${run.workflow_type}  ${run.status}  ${run.state_name}  attempt ${run.attempt}  ${run.created_at}`;
}

function exitCode(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
  if (err instanceof UsageError) return 2;
  return 1;
}
