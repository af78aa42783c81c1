import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ConnectionStore } from '../activities/connections';
import { createDbhostActivities } from '../activities/dbhost';
import { createDataConverter } from '../activities/payload-codec';
import { createProjection } from '../activities/projection';
import { SecretBox } from '../activities/secret-box';
import { openDatabase, projectRoot } from '../db/client';
import { DBHOST_VALID_TOKEN, startDbhostDouble } from '../test/doubles/dbhost-double';
import { dispatcherFor } from '../test/support/outbound';
import { SEARCH_ATTRIBUTES } from '../workflows/constants';
import type { EngineWorkflowInput, FailedRunDetails } from '../workflows/runtime/contract';
import { type BenchOutcome, report, type SummaryLine } from './lib/report';
import { round } from './lib/stats';

const TYPE = 'dbhost.operations.wait';
const QUEUE = 'bench-long-poll';
const EventType = temporal.api.enums.v1.EventType;

interface Execution {
  runId: string;
  events: number;
  polls: number;
  endedBy: string;
}

/**
 * 6. Long polls: dbhost.operations.wait with timeout 600 s on an operation that never finishes
 * (the double's `never-…`), on Temporal's time-skipping test server, so 600 s of durable timers
 * pass in seconds. Its history is followed across continue-as-new and counted per execution,
 * against poll_count. poll_interval 1 is the case asked for; 5 and 30 show how it scales.
 */
export async function longPoll(workflowBundle: { code: string }): Promise<BenchOutcome> {
  const intervals = (process.env.BENCH_LONGPOLL_INTERVALS ?? '1,5,30').split(',').map(Number);
  // Inputs must come through the service's codec, or the runtime refuses them (organization_mismatch).
  const dataConverter = createDataConverter(randomBytes(32));
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: path.join(projectRoot(), '.venv', 'bin', 'temporal-test-server') } },
    client: { dataConverter },
  });
  const database = await openDatabase({});
  const double = await startDbhostDouble();
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  try {
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
    await database.migrate();
    const store = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
    const org = 'org_bench_longpoll';
    const conn = (await store.create(org, 'dbhost', 'bench', { api_token: DBHOST_VALID_TOKEN }, { api_url: double.url }))!.connectionUuid;
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter,
      taskQueue: QUEUE,
      workflowBundle,
      activities: {
        ...createProjection(database.db),
        ...createDbhostActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 5_000, dispatcher: dispatcherFor([double.url]), connections: store }),
      },
    });
    running = worker.run();

    const rows: Array<Record<string, unknown>> = [];
    const perExecution: Array<Record<string, unknown>> = [];
    const summary: SummaryLine[] = [];
    for (const pollInterval of intervals) {
      const id = `wf_longpoll_${pollInterval}_${randomBytes(4).toString('hex')}`;
      const input: EngineWorkflowInput = {
        organization_uuid: org,
        initial_data: {
          connection_uuid: conn,
          dbhost_project_id: 'bench-project',
          dbhost_operation_id: `never-${id}`,
          timeout_seconds: 600,
          poll_interval: pollInterval,
        },
      };
      const t0 = performance.now();
      const handle = await env.client.workflow.start(TYPE, { taskQueue: QUEUE, workflowId: id, args: [input] });
      let output: Record<string, unknown> = {};
      try {
        output = (await handle.result()) as Record<string, unknown>;
      } catch (err) {
        const details = ((err as WorkflowFailedError).cause as { details?: unknown[] } | undefined)?.details?.[0] as FailedRunDetails | undefined;
        if (!details) throw err;
        output = details.output;
      }
      const wallMs = performance.now() - t0;

      // Follow the chain of executions from the first run id through every continue-as-new.
      const executions: Execution[] = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      while (runId) {
        const history: temporal.api.history.v1.IHistory = await env.client.workflow.getHandle(id, runId).fetchHistory();
        const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
        const last = events[events.length - 1];
        const next: string | undefined = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
        const polls = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length;
        executions.push({ runId, events: events.length, polls, endedBy: EventType[last?.eventType ?? 0]?.replace('EVENT_TYPE_WORKFLOW_EXECUTION_', '') ?? '?' });
        runId = next || undefined;
      }
      const total = executions.reduce((a, e) => a + e.events, 0);
      const maxEvents = Math.max(...executions.map((e) => e.events));
      const pollCount = Number(output.poll_count);
      rows.push({
        poll_interval: pollInterval,
        timeout_seconds: 600,
        poll_count: pollCount,
        failure_type: output.failure_type,
        executions: executions.length,
        'continue-as-new': executions.length - 1,
        'events, all executions': total,
        'events per poll': round(total / pollCount, 1),
        'max events in one execution': maxEvents,
        'wall time (s)': round(wallMs / 1000, 1),
      });
      executions.forEach((e, i) =>
        perExecution.push({ poll_interval: pollInterval, execution: i + 1, events: e.events, 'activity polls': e.polls, 'ended by': e.endedBy }),
      );
      summary.push({
        benchmark: `6. long poll, poll_interval ${pollInterval}, timeout 600`,
        metric: 'history events',
        subject: `max ${maxEvents} per execution (${executions.length} executions)`,
        baseline: `${total} in all, ${pollCount} polls`,
        ratio: round(maxEvents / total, 3),
        target: 'bounded (continue-as-new past 2,000)',
      });
    }
    return report(
      'long-poll',
      [
        { title: '6. Long polls on the time-skipping server: history length against poll_count', rows },
        { title: '6. Per execution (each continue-as-new starts a new one)', rows: perExecution },
      ],
      summary,
      [
        `${TYPE} against the dbhost double's never-finishing operation, real activities and projection (PGlite in memory), time-skipping test server`,
        'ratio in the summary = largest execution / whole chain: what one Temporal history must hold, against what it would hold without continue-as-new',
      ],
    );
  } finally {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await double.close();
    await database.close();
    await env.teardown();
  }
}
