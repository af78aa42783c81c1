import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { temporal } from '@temporalio/proto';
import { asc, eq } from 'drizzle-orm';
import { claimedOwner, isEncryptedPayload, openPayload } from '../../activities/payload-codec';
import { createProjection } from '../../activities/projection';
import type { DatabaseHandle } from '../../db/client';
import { runs, transitions } from '../../db/schema';
import { SA_ORGANIZATION } from '../../workflows/constants';
import type { FailureFields } from '../../workflows/runtime/failure';
import { findDefinition } from '../../workflows/registry';
import type { EngineWorkflowInput } from '../../workflows/runtime/contract';
import type { RunData } from '../../workflows/runtime/definition';
import { redact } from '../../workflows/runtime/redact';
import { CONFIG, DATABASE, LOGGER, TEMPORAL_CLIENTS } from '../common/di';
import { loggableError } from '../common/loggable-error';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import type { TemporalClients } from '../temporal-clients';

const Status = temporal.api.enums.v1.WorkflowExecutionStatus;
/** Executions closed this long before a sweep began are looked at again by the next one: visibility lags behind. */
const OVERLAP_MS = 60_000;

const CLOSED_BY_TEMPORAL: Partial<Record<number, { failure_type: string; how: string }>> = {
  [Status.WORKFLOW_EXECUTION_STATUS_TERMINATED]: { failure_type: 'terminated', how: 'terminated in Temporal (the UI, the CLI or a schedule overlap policy terminate_other)' },
  [Status.WORKFLOW_EXECUTION_STATUS_TIMED_OUT]: { failure_type: 'timed_out', how: 'timed out in Temporal (its workflow execution timeout)' },
};

export interface ClosedExecution {
  workflowId: string;
  runId: string;
  status: number;
  closedAt: Date;
  organization?: string;
}

/**
 * A run's execution that Temporal closes without the workflow's say (terminated, or timed out by
 * an execution timeout) cannot project its own end: its run would stay RUNNING for good, its
 * streams open, its retry refused as RUNNING. Each API process looks for such executions in
 * Temporal's visibility every CLOSED_RUN_SWEEP_SECONDS and writes the end the workflow could not:
 * FAILED, failure_type `terminated` or `timed_out`. Several processes sweeping at once write the
 * same transition; the projection keeps one.
 */
@Injectable()
export class ClosedRunsReconciler implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;
  private since: Date;
  private readonly projection;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(TEMPORAL_CLIENTS) private readonly temporal: TemporalClients,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.projection = createProjection(database.db);
    this.since = new Date(Date.now() - config.closedRunLookbackSeconds * 1000);
  }

  onModuleInit() {
    if (this.config.closedRunSweepSeconds <= 0) return;
    this.timer = setInterval(() => void this.sweep(), this.config.closedRunSweepSeconds * 1000);
    this.timer.unref();
    void this.sweep();
  }

  async onModuleDestroy() {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One pass; answers how many runs it ended. A pass still going is joined, not doubled. */
  sweep(): Promise<number> {
    this.sweeping ??= this.pass().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async pass(): Promise<number> {
    const began = Date.now();
    let ended = 0;
    try {
      for await (const execution of this.closedSince(this.since)) {
        if (await this.reconcile(execution)) ended += 1;
      }
      this.since = new Date(began - OVERLAP_MS);
      if (ended) this.log.info({ ended }, 'runs closed in Temporal projected as ended');
    } catch (err) {
      this.log.warn({ err: loggableError(err) }, 'closed executions not reconciled; the next sweep tries again');
    }
    return ended;
  }

  private async *closedSince(since: Date): AsyncGenerator<ClosedExecution> {
    const service = this.temporal.connection.workflowService;
    const query = `ExecutionStatus IN ("Terminated", "TimedOut") AND CloseTime >= "${since.toISOString()}"`;
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await service.listWorkflowExecutions({ namespace: this.config.temporalNamespace, query, pageSize: 100, nextPageToken });
      for (const info of page.executions ?? []) {
        const { workflowId, runId } = info.execution ?? {};
        if (!workflowId || !runId || info.status == null) continue;
        yield { workflowId, runId, status: info.status, closedAt: timestampDate(info.closeTime) ?? new Date(), organization: keywordOf(info.searchAttributes, SA_ORGANIZATION.name) };
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
  }

  /** Ends the run of a closed execution when that execution is still the run's latest and the run is open. */
  async reconcile(execution: ClosedExecution): Promise<boolean> {
    const closedBy = CLOSED_BY_TEMPORAL[execution.status];
    if (!closedBy) return false;
    const db = this.database.db;
    const [row] = await db.select().from(runs).where(eq(runs.workflowId, execution.workflowId));
    if (!row || row.isTerminal) return false;
    if (execution.organization && execution.organization !== row.organizationUuid) return false;
    // The latest execution under the id is the run now: a retry may have started since.
    const latest = await this.temporal.connection.workflowService.describeWorkflowExecution({
      namespace: this.config.temporalNamespace,
      execution: { workflowId: execution.workflowId },
    });
    if (latest.workflowExecutionInfo?.execution?.runId !== execution.runId) return false;

    const def = findDefinition(row.workflowType);
    const failure: FailureFields = {
      failure_reason: `the run's execution was ${closedBy.how}`,
      failure_type: closedBy.failure_type,
      failed_step: 'temporal',
      failed_layer: 'temporal',
      failed_at_state: row.stateName,
      error: `execution ${closedBy.failure_type}`,
      error_type: closedBy.failure_type === 'terminated' ? 'TerminatedFailure' : 'TimeoutFailure',
    };
    const stamp = def?.failure_stamp === 'failed_at' ? { failed_at: execution.closedAt.toISOString() } : { failed_action: closedBy.failure_type };
    // What the run's end shows, as the engine would have: its input, then every transition's data,
    // secrets redacted, unechoed fields left out. A composed type's secret fields are not known
    // here, so its input is left out rather than risk one.
    const shown: RunData = def ? redact(await this.inputData(row.organizationUuid, execution), def.secret_fields) : {};
    for (const t of await db.select({ data: transitions.data }).from(transitions).where(eq(transitions.workflowId, row.workflowId)).orderBy(asc(transitions.seq))) {
      Object.assign(shown, t.data);
    }
    for (const field of def?.unechoed_fields ?? []) delete shown[field];
    const data = { ...failure, ...stamp };
    await this.projection.projectTransition({
      workflow_id: row.workflowId,
      organization_uuid: row.organizationUuid,
      workflow_type: row.workflowType,
      version: row.version,
      attempt: row.attempt,
      seq: row.lastSeq + 1,
      from: row.stateName,
      to: def?.transitions.find((t) => t.action === 'fail')?.to ?? 'failed',
      action: 'fail',
      at: execution.closedAt.toISOString(),
      data,
      terminal: { status: 'FAILED', state_data: { ...shown, ...data } },
    });
    const [after] = await db.select({ isTerminal: runs.isTerminal }).from(runs).where(eq(runs.workflowId, row.workflowId));
    return Boolean(after?.isTerminal);
  }

  /** The data the execution started with (a retry's or continue-as-new's resume point, else its initial_data), decrypted. */
  private async inputData(organization: string, execution: ClosedExecution): Promise<RunData> {
    const { history } = await this.temporal.connection.workflowService.getWorkflowExecutionHistory({
      namespace: this.config.temporalNamespace,
      execution: { workflowId: execution.workflowId, runId: execution.runId },
      maximumPageSize: 1,
    });
    const sealed = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!sealed || !isEncryptedPayload(sealed) || claimedOwner(sealed) !== organization) return {};
    const input = JSON.parse(Buffer.from(openPayload(this.temporal.keys, sealed).payload.data ?? []).toString('utf8')) as Partial<EngineWorkflowInput>;
    return { ...(input.resume?.data ?? input.initial_data ?? {}) };
  }
}

function timestampDate(ts: { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined): Date | undefined {
  if (!ts?.seconds) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}

/** A keyword search attribute's value: its payload is plain JSON, never encrypted. */
function keywordOf(attributes: temporal.api.common.v1.ISearchAttributes | null | undefined, name: string): string | undefined {
  const data = attributes?.indexedFields?.[name]?.data;
  if (!data) return undefined;
  const value: unknown = JSON.parse(Buffer.from(data).toString('utf8'));
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}
