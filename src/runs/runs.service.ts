import { Inject, Injectable } from '@nestjs/common';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { and, asc, eq, gt, lt } from 'drizzle-orm';
import { z } from 'zod';
import { createProjection } from '../../activities/projection';
import { registrationsOf } from '../../activities/run-registrations';
import type { ConnectionStore } from '../../activities/connections';
import type { DatabaseHandle } from '../../db/client';
import { idempotencyKeys, runs, transitions } from '../../db/schema';
import { temporalStart } from '../../workflows/composition/definition';
import { type EngineWorkflowInput, type FailedRunDetails, type RunOwner, WORKFLOW_ID_IN_USE } from '../../workflows/runtime/contract';
import { findDefinition } from '../../workflows/registry';
import { END_USER_FIELDS, initialState, type RunData, type WorkflowDefinition } from '../../workflows/runtime/definition';
import { isEndUser, type Principal } from '../auth/principal';
import { CatalogService } from '../catalog/catalog.service';
import { ApiError, type FieldProblem, notFound, validationFailed } from '../common/api-error';
import { CONFIG, CONNECTIONS, DATABASE, TEMPORAL_CLIENTS } from '../common/di';
import { zodProblems } from '../common/validation';
import type { AppConfig } from '../config';
import type { TemporalClients } from '../temporal-clients';
import { newRunId, requestHash } from './run-ids';
import { type ListQuery, listRuns } from './run-list';
import { runView, startResult, transitionView } from './run-views';
import { IDEMPOTENCY_KEY, type StartBody } from './start-body';
import { DatabaseCheck } from './database-check';
import { launchRun } from './launch';
import { StartChecks } from './start-checks';
import { engineStartOptions } from './start-options';

/** A type's declared idempotency input stands for the Idempotency-Key header a request left out. */
function inputIdempotencyKey(def: WorkflowDefinition, data: RunData): string | undefined {
  const value = def.idempotency_key_field ? data[def.idempotency_key_field] : undefined;
  return typeof value === 'string' ? value : undefined;
}

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const RETRY_CLOSE_WAIT_MS = 5_000;
const RETRYABLE_STATUSES: ReadonlySet<string> = new Set(['FAILED', 'CANCELLED']);

@Injectable()
export class RunsService {
  private readonly projection;
  private readonly registrations;
  private readonly startChecks;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(TEMPORAL_CLIENTS) private readonly temporal: TemporalClients,
    @Inject(CONFIG) config: AppConfig,
    @Inject(CONNECTIONS) connections: ConnectionStore,
    private readonly catalog: CatalogService,
    private readonly databaseCheck: DatabaseCheck,
  ) {
    this.projection = createProjection(database.db);
    this.registrations = registrationsOf(database.db);
    this.startChecks = new StartChecks(config, connections);
  }

  private get db() {
    return this.database.db;
  }

  /**
   * Starts a run; `replayed` says its Idempotency-Key returned the run an earlier identical request started.
   * `databaseDown` is the database check begun as the request arrived, if it was.
   */
  async start(principal: Principal, sent: StartBody, idempotencyKey?: string, databaseDown = this.databaseCheck.ask()) {
    const body = pinEndUser(principal, sent);
    const def = await this.checkStart(principal, body);
    idempotencyKey ??= inputIdempotencyKey(def, body.initial_data);
    if (idempotencyKey === undefined) return this.launch(def, body, principal, newRunId(), databaseDown);

    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw validationFailed([{ field: 'Idempotency-Key', rule: 'format', message: 'must be 1-255 printable ASCII characters' }]);
    }
    const hash = requestHash(body);
    const org = principal.organization_uuid;
    // End users of one organization never share (nor learn of) each other's keys.
    const key = isEndUser(principal) ? `end_user/${principal.client_uuid}/${principal.user_id}/${idempotencyKey}` : idempotencyKey;
    const keyMatch = and(eq(idempotencyKeys.organizationUuid, org), eq(idempotencyKeys.key, key));
    await this.db
      .delete(idempotencyKeys)
      .where(and(keyMatch, lt(idempotencyKeys.createdAt, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS))));
    const claimed = await this.db
      .insert(idempotencyKeys)
      .values({ organizationUuid: org, key, requestHash: hash, workflowId: newRunId() })
      .onConflictDoNothing()
      .returning();
    const [entry] = claimed.length ? claimed : await this.db.select().from(idempotencyKeys).where(keyMatch);
    if (entry.requestHash !== hash) {
      throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
    }
    if (!claimed.length) {
      const existing = await this.findRun(entry.workflowId, org);
      if (existing) return { result: startResult(existing), replayed: true };
    }
    // Not the request that claimed the key: a concurrent duplicate, or the repeat of one that failed.
    return this.launch(def, body, principal, entry.workflowId, databaseDown);
  }

  /** Everything a start is validated on (422 naming each field), before anything starts; also for a schedule's runs. */
  async checkStart(principal: Principal, body: StartBody): Promise<WorkflowDefinition> {
    this.checkInitialDataShape(body.initial_data);
    const def = await this.catalog.resolve(body.workflow_type, principal.organization_uuid);
    if (isEndUser(principal) && !def.exposed_to_end_users) {
      throw new ApiError(403, 'not_exposed_to_end_users', `workflow type ${def.workflow_type} cannot be started with an end-user token`);
    }
    this.checkInitialData(def, body.initial_data, principal);
    await this.checkConnectionDestinations(def, body.initial_data, principal);
    return def;
  }

  /** Bounds what a run carries through Temporal and the projection, before any schema work. */
  private checkInitialDataShape(data: RunData) {
    const problem = this.startChecks.shapeProblem(data);
    if (problem) throw validationFailed([{ field: 'initial_data', ...problem }]);
  }

  private checkInitialData(def: WorkflowDefinition, data: RunData, principal: Principal) {
    const orgField = def.organization_field;
    if (orgField && data[orgField] !== undefined && data[orgField] !== principal.organization_uuid) {
      throw new ApiError(403, 'organization_mismatch', `initial_data.${orgField} must be the organization of the token`);
    }
    const parsed = def.input.safeParse(data);
    const problems: FieldProblem[] = parsed.success ? [] : zodProblems(parsed.error, data, 'initial_data');
    for (const field of def.outbound_url_fields) {
      const value = data[field];
      if (typeof value !== 'string' || problems.some((p) => p.field === `initial_data.${field}`)) continue;
      const problem = this.startChecks.outboundProblem(value);
      if (problem) problems.push({ field: `initial_data.${field}`, rule: 'outbound_policy', message: problem });
    }
    if (problems.length) throw validationFailed(problems);
  }

  /** A URL input other than the connection's stored destination is refused here, before anything starts. */
  private async checkConnectionDestinations(def: WorkflowDefinition, data: RunData, principal: Principal) {
    const problems: FieldProblem[] = [];
    for (const binding of def.connection_url_fields ?? []) {
      const connectionUuid = data[binding.connection];
      const url = data[binding.url];
      if (typeof connectionUuid !== 'string' || typeof url !== 'string') continue;
      const problem = await this.startChecks.connectionDestinationProblem(principal.organization_uuid, binding.plugin, connectionUuid, url);
      if (problem) problems.push({ field: `initial_data.${binding.url}`, rule: 'connection_destination', message: problem });
    }
    if (problems.length) throw validationFailed(problems);
  }

  /**
   * A concurrent request with the same Idempotency-Key may have started the run first: the same
   * run, replayed. A repeat of a start that failed (503) starts the run itself: not replayed.
   */
  private async launch(def: WorkflowDefinition, body: StartBody, principal: Principal, workflowId: string, databaseDown: Promise<unknown>) {
    // With the database down (the token may come from the cache) refuse before anything starts,
    // rather than answer 503 about a run that is executing.
    const down = await databaseDown;
    if (down !== undefined) throw down;
    const owner = isEndUser(principal) ? { end_user_uuid: principal.user_id, client_uuid: principal.client_uuid } : undefined;
    const started = await launchRun(this.temporal, this.registrations, {
      def,
      organizationUuid: principal.organization_uuid,
      workflowId,
      initialData: body.initial_data,
      owner,
    });
    return { result: startResult({ workflowId, stateName: initialState(def), isTerminal: false }), replayed: !started };
  }

  async findRun(workflowId: string, organizationUuid: string) {
    const rows = await this.db
      .select()
      .from(runs)
      .where(and(eq(runs.workflowId, workflowId), eq(runs.organizationUuid, organizationUuid)));
    return rows[0];
  }

  /** Another organization's run, or to an end user another user's, is reported exactly like a missing one. */
  async requireRun(workflowId: string, principal: Principal) {
    const row = await this.findRun(workflowId, principal.organization_uuid);
    const foreign = isEndUser(principal) && (row?.endUserUuid !== principal.user_id || row?.clientUuid !== principal.client_uuid);
    if (!row || foreign) throw notFound(`run ${workflowId}`);
    return row;
  }

  async get(workflowId: string, principal: Principal) {
    return runView(await this.requireRun(workflowId, principal));
  }

  list(principal: Principal, query: ListQuery) {
    const owner = isEndUser(principal) ? { endUserUuid: principal.user_id, clientUuid: principal.client_uuid } : undefined;
    return listRuns(this.db, principal.organization_uuid, query, owner);
  }

  async history(workflowId: string, principal: Principal) {
    await this.requireRun(workflowId, principal);
    return { workflow_id: workflowId, transitions: (await this.transitionsAfter(workflowId, 0)).map(transitionView) };
  }

  transitionsAfter(workflowId: string, seq: number) {
    return this.db
      .select()
      .from(transitions)
      .where(and(eq(transitions.workflowId, workflowId), gt(transitions.seq, seq)))
      .orderBy(asc(transitions.seq));
  }

  /**
   * Asks Temporal to cancel the execution; the workflow itself then fails the run as cancelled.
   * A run that ends between the read and the request is refused like one already terminal.
   */
  async cancel(workflowId: string, principal: Principal) {
    const row = await this.requireRun(workflowId, principal);
    const notRunning = (status: string) =>
      new ApiError(409, 'run_not_running', `only a RUNNING run can be cancelled; this run is ${status}`);
    if (row.isTerminal) throw notRunning(row.status);
    await this.refuseDagChild(workflowId, row.organizationUuid, 'cancel');
    try {
      await this.temporal.forOrganization(row.organizationUuid).workflow.getHandle(workflowId).cancel();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notRunning('no longer running');
      throw err;
    }
    return { workflow_id: workflowId, cancel_requested: true };
  }

  /**
   * Re-drives a FAILED or CANCELLED run from its last good state, as a new execution under the same
   * workflow id. Only the execution the row says failed is re-driven, once: a request that finds
   * another retry started meanwhile (or running) is refused with retry_in_progress.
   */
  async retry(workflowId: string, principal: Principal) {
    const row = await this.requireRun(workflowId, principal);
    if (row.status === 'RUNNING' && row.attempt > 1) throw retryInProgress();
    if (!RETRYABLE_STATUSES.has(row.status)) {
      throw new ApiError(409, 'not_failed', `only a FAILED or CANCELLED run can be retried; this run is ${row.status}`);
    }
    await this.refuseDagChild(workflowId, row.organizationUuid, 'retry');
    const def = await this.catalog.resolve(row.workflowType, row.organizationUuid);
    const details = await this.failedRunDetails(workflowId, row.organizationUuid, row.firstExecutionRunId);
    // Rows from before chains were recorded read the latest execution, which may be a concurrent retry's.
    if (details.checkpoint.attempt !== row.attempt) throw retryInProgress();
    const attempt = details.checkpoint.attempt + 1;
    const input: EngineWorkflowInput = {
      organization_uuid: row.organizationUuid,
      initial_data: {},
      resume: { reason: 'retry', ...details.checkpoint, attempt },
    };
    let firstExecutionRunId: string;
    try {
      const { workflowType, args } = temporalStart(def, input);
      ({ firstExecutionRunId } = await this.temporal.forOrganization(row.organizationUuid).workflow.start(workflowType, {
        ...engineStartOptions(def, row.organizationUuid, details.checkpoint.state, { scheduleId: row.scheduleId ?? undefined, owner: ownerOf(row) }),
        workflowId,
        args,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      }));
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw retryInProgress();
      throw err;
    }
    try {
      await this.projection.projectRunStarted({
        workflow_id: workflowId,
        organization_uuid: row.organizationUuid,
        workflow_type: row.workflowType,
        version: row.version,
        state_name: details.checkpoint.state,
        attempt,
        at: new Date().toISOString(),
        first_execution_run_id: firstExecutionRunId,
      });
    } catch (err) {
      // A concurrent retry of the same failure took the run over (and ended) between the read and
      // the start: the execution started here is refused by the projection too, before its first step.
      if (err instanceof ApplicationFailure && err.type === WORKFLOW_ID_IN_USE) throw retryInProgress();
      throw err;
    }
    return startResult({ workflowId, stateName: details.checkpoint.state, isTerminal: false });
  }

  /**
   * A Dag's child is retried and cancelled through its parent only. Retried alone it repeats its
   * provider call, and the parent's own retry then starts it once more (or finds it running and
   * fails for good); cancelled alone it fails the parent's layer instead of cancelling the parent.
   * Temporal knows the parent of the child's execution; ids without a dot were never given to a
   * child (childWorkflowId), so ordinary runs cost no describe.
   */
  private async refuseDagChild(workflowId: string, organization: string, verb: 'retry' | 'cancel') {
    if (!workflowId.includes('.')) return;
    let parent: string | null | undefined;
    try {
      parent = (await this.temporal.forOrganization(organization).workflow.getHandle(workflowId).describe()).parentExecution?.workflowId;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return;
      throw err;
    }
    if (parent) {
      throw new ApiError(409, 'child_run', `run ${workflowId} is a layer of Dag run ${parent}: ${verb} ${parent} instead (POST /api/workflows/${parent}/${verb})`, {
        parent_workflow_id: parent,
      });
    }
  }

  /**
   * The failure of the run's execution chain (`firstExecutionRunId`, through continue-as-new), not
   * of whatever execution is latest under the id: a concurrent retry's would be re-driven again.
   * The projection records the failed transition just before the execution ends, so a retry can
   * arrive while Temporal still says RUNNING: wait a moment for the failure rather than refusing.
   */
  private async failedRunDetails(workflowId: string, organization: string, firstExecutionRunId: string | null): Promise<Required<FailedRunDetails>> {
    const chain = firstExecutionRunId ? { firstExecutionRunId } : undefined;
    const handle = this.temporal.forOrganization(organization).workflow.getHandle(workflowId, undefined, chain);
    let timer: NodeJS.Timeout | undefined;
    const stillRunning = new Promise<'running'>((resolve) => {
      timer = setTimeout(() => resolve('running'), RETRY_CLOSE_WAIT_MS);
    });
    try {
      const outcome = await Promise.race([handle.result().then(() => 'completed' as const), stillRunning]);
      throw new ApiError(409, 'not_failed', `the run's execution is ${outcome === 'running' ? 'still running' : 'completed'}, not FAILED`);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
      const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as FailedRunDetails | undefined) : undefined;
      if (details?.checkpoint) return { checkpoint: details.checkpoint, output: details.output };
      throw new ApiError(409, 'not_retryable', 'this run cannot be re-driven (its input was invalid, it was terminated or timed out in Temporal, it was cancelled before cancelled runs kept a checkpoint, or it is a Dag whose layers were compensated or whose child cannot be re-driven): start a new run');
    } finally {
      clearTimeout(timer);
    }
  }
}

function retryInProgress(): ApiError {
  return new ApiError(409, 'retry_in_progress', 'this run is already being retried');
}

/**
 * An end user's identity goes into the run as the engine says, whatever was sent, for the built-in
 * types whose input has END_USER_FIELDS (a composition cannot expose such a type: compile.ts).
 */
function pinEndUser(principal: Principal, body: StartBody): StartBody {
  if (!isEndUser(principal)) return body;
  const input = findDefinition(body.workflow_type)?.input;
  if (!(input instanceof z.ZodObject)) return body;
  const pinned: RunData = { ...body.initial_data };
  for (const [field, claim] of Object.entries(END_USER_FIELDS)) if (Object.hasOwn(input.shape, field)) pinned[field] = principal[claim];
  return { ...body, initial_data: pinned };
}

/** The end user a run belongs to, as its memo carries it to a retry's execution. */
function ownerOf(row: { endUserUuid: string | null; clientUuid: string | null }): RunOwner | undefined {
  return row.endUserUuid && row.clientUuid ? { end_user_uuid: row.endUserUuid, client_uuid: row.clientUuid } : undefined;
}
