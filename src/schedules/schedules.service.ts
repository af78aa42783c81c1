import { Inject, Injectable } from '@nestjs/common';
import { isGrpcServiceError, ScheduleNotFoundError } from '@temporalio/client';
import { and, desc, eq } from 'drizzle-orm';
import { randomBytes } from 'node:crypto';
import type { DatabaseHandle } from '../../db/client';
import { schedules } from '../../db/schema';
import { SA_ORGANIZATION, SA_WORKFLOW_TYPE, SCHEDULE_ID_PREFIX } from '../../workflows/constants';
import { temporalStart } from '../../workflows/composition/definition';
import type { EngineWorkflowInput } from '../../workflows/runtime/contract';
import { initialState } from '../../workflows/runtime/definition';
import { redact } from '../../workflows/runtime/redact';
import type { Principal } from '../auth/principal';
import { notFound, validationFailed } from '../common/api-error';
import { DATABASE, TEMPORAL_CLIENTS } from '../common/di';
import { newRunId } from '../runs/run-ids';
import { RunsService } from '../runs/runs.service';
import { engineStartOptions } from '../runs/start-options';
import type { TemporalClients } from '../temporal-clients';
import type { ScheduleBody } from './schedule-body';
import { overlapPolicy, scheduleSpec, scheduleState } from './schedule-spec';

type ScheduleRow = typeof schedules.$inferSelect;

/** gRPC status code INVALID_ARGUMENT. */
const GRPC_INVALID_ARGUMENT = 3;

const newScheduleId = () => SCHEDULE_ID_PREFIX + Date.now().toString(36).padStart(10, '0') + randomBytes(8).toString('hex');

/**
 * An organization's Temporal Schedules. Each action starts an ordinary engine run of the
 * organization (its client encrypts the action's input under the organization's key), which the
 * workflow projects like any run, carrying the schedule id in its memo.
 */
@Injectable()
export class SchedulesService {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(TEMPORAL_CLIENTS) private readonly temporal: TemporalClients,
    private readonly runs: RunsService,
  ) {}

  private get db() {
    return this.database.db;
  }

  async create(principal: Principal, body: ScheduleBody) {
    const def = await this.runs.checkStart(principal, body);
    const org = principal.organization_uuid;
    const scheduleId = newScheduleId();
    const input: EngineWorkflowInput = { organization_uuid: org, initial_data: body.initial_data };
    const client = this.temporal.forOrganization(org);
    try {
      await client.schedule.create({
        scheduleId,
        spec: scheduleSpec(body),
        // Temporal appends the scheduled time to this id: every run gets its own wf_… id.
        action: { type: 'startWorkflow', ...temporalStart(def, input), workflowId: newRunId(), ...engineStartOptions(def, org, initialState(def), { scheduleId }) },
        policies: { overlap: overlapPolicy(body.overlap) },
        state: { paused: body.paused },
        // For operators filtering the Temporal UI's Schedules page, as they filter runs.
        typedSearchAttributes: [
          { key: SA_ORGANIZATION, value: org },
          { key: SA_WORKFLOW_TYPE, value: def.workflow_type },
        ],
      });
    } catch (err) {
      throw refusedSpec(err, body) ?? err;
    }
    try {
      const [row] = await this.db
        .insert(schedules)
        .values({
          scheduleId,
          organizationUuid: org,
          workflowType: def.workflow_type,
          initialData: redact(body.initial_data, def.secret_fields),
          cron: body.cron ?? null,
          intervalSeconds: body.interval_seconds ?? null,
          timezone: body.timezone,
          overlap: body.overlap,
        })
        .returning();
      return this.view(row);
    } catch (err) {
      // Not listed means not owned: a schedule the database never recorded must not keep starting runs.
      await client.schedule.getHandle(scheduleId).delete().catch(() => undefined);
      throw err;
    }
  }

  async list(principal: Principal) {
    const rows = await this.db
      .select()
      .from(schedules)
      .where(eq(schedules.organizationUuid, principal.organization_uuid))
      .orderBy(desc(schedules.createdAt), desc(schedules.scheduleId));
    const views = await Promise.all(rows.map((row) => this.view(row).catch(gone)));
    return { schedules: views.filter((v) => v !== undefined) };
  }

  async get(principal: Principal, scheduleId: string) {
    return this.viewOrNotFound(await this.requireRow(principal, scheduleId));
  }

  async remove(principal: Principal, scheduleId: string) {
    const row = await this.requireRow(principal, scheduleId);
    await this.handle(row).delete().catch(ignoreNotFound);
    await this.db.delete(schedules).where(eq(schedules.scheduleId, row.scheduleId));
  }

  async pause(principal: Principal, scheduleId: string, paused: boolean) {
    const row = await this.requireRow(principal, scheduleId);
    const handle = this.handle(row);
    await (paused ? handle.pause() : handle.unpause()).catch(notFoundAsApiError(scheduleId));
    return this.viewOrNotFound(row);
  }

  async trigger(principal: Principal, scheduleId: string) {
    const row = await this.requireRow(principal, scheduleId);
    await this.handle(row).trigger().catch(notFoundAsApiError(scheduleId));
    return { schedule_id: row.scheduleId, triggered: true };
  }

  /** Another organization's schedule is reported exactly like a missing one. */
  private async requireRow(principal: Principal, scheduleId: string): Promise<ScheduleRow> {
    const [row] = await this.db
      .select()
      .from(schedules)
      .where(and(eq(schedules.scheduleId, scheduleId), eq(schedules.organizationUuid, principal.organization_uuid)));
    if (!row) throw notFound(`schedule ${scheduleId}`);
    return row;
  }

  private handle(row: ScheduleRow) {
    return this.temporal.forOrganization(row.organizationUuid).schedule.getHandle(row.scheduleId);
  }

  private viewOrNotFound(row: ScheduleRow) {
    return this.view(row).catch(notFoundAsApiError(row.scheduleId));
  }

  private async view(row: ScheduleRow) {
    const description = await this.handle(row).describe();
    return {
      schedule_id: row.scheduleId,
      workflow_type: row.workflowType,
      initial_data: row.initialData,
      cron: row.cron,
      interval_seconds: row.intervalSeconds,
      timezone: row.timezone,
      overlap: row.overlap,
      created_at: row.createdAt.toISOString(),
      ...scheduleState(description),
    };
  }
}

/**
 * Temporal refuses a cron expression it cannot parse only when the schedule is created; the
 * client turns that INVALID_ARGUMENT ("Invalid schedule spec: …") into a TypeError.
 */
function refusedSpec(err: unknown, body: ScheduleBody) {
  const grpc = (err as { cause?: unknown })?.cause;
  const refused = err instanceof TypeError || (isGrpcServiceError(grpc) && grpc.code === GRPC_INVALID_ARGUMENT);
  if (!refused) return undefined;
  const message = `Temporal refused it: ${(err as Error).message}`;
  if (/time ?zone/i.test(message)) return validationFailed([{ field: 'timezone', rule: 'timezone', message }]);
  const field = body.cron !== undefined ? 'cron' : 'interval_seconds';
  return validationFailed([{ field, rule: 'schedule_spec', message }]);
}

/** A schedule deleted in Temporal behind the API's back (the UI, the CLI) is left out of the list. */
function gone(err: unknown): undefined {
  if (err instanceof ScheduleNotFoundError) return undefined;
  throw err;
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof ScheduleNotFoundError)) throw err;
}

function notFoundAsApiError(scheduleId: string) {
  return (err: unknown): never => {
    throw err instanceof ScheduleNotFoundError ? notFound(`schedule ${scheduleId}`) : err;
  };
}
