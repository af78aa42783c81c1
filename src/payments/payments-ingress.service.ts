import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { ConnectionStore } from '../../activities/connections';
import { claimEvent } from '../../activities/payments';
import { type NormalisedEvent, normaliseEvent, PayloadInvalid } from '../../activities/payments-events';
import { webhookSecrets } from '../../activities/payments-secrets';
import { SignatureRefusal, verifySignature } from '../../activities/payments-signature';
import { createProjection } from '../../activities/projection';
import type { DatabaseHandle } from '../../db/client';
import { connections, paymentEvents, runs } from '../../db/schema';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';
import { CatalogService } from '../catalog/catalog.service';
import { ApiError, notFound } from '../common/api-error';
import { CONFIG, CONNECTIONS, DATABASE, TEMPORAL_CLIENTS } from '../common/di';
import { isDatabaseUnavailable, isTemporalUnavailable } from '../common/unavailable';
import { zodProblems } from '../common/validation';
import type { AppConfig } from '../config';
import { launchRun } from '../runs/launch';
import type { TemporalClients } from '../temporal-clients';
import { chainWorkflowId, INGRESS_INPUTS, inputsNoDeliveryGives, receiverWorkflowType } from './receiver-chain';
import { signatureRefused } from './signature-refused';

export type IngressAnswer =
  | { status: 202; body: { received: true; workflow_id: string; event_id: string } }
  | { status: 200; body: { received: true; duplicate: true; workflow_id: string } };

/** The rate limits one request spends (IngressLimiter): they throw the 429 when spent. */
export interface IngressLimits {
  verified(): Promise<void>;
  refused(): Promise<void>;
}

/** A payments connection's signing secrets, each with the webhook_secret_key that names it to the receive run. */
function candidateSecrets(secrets: Record<string, unknown>): Array<{ key?: string; secret: string }> {
  const { fallback, named } = webhookSecrets(secrets);
  return [...(fallback ? [{ secret: fallback }] : []), ...[...named].map(([key, secret]) => ({ key, secret }))];
}

/** A composition declares only the receiver inputs it uses (its free inputs); it is given those. */
function declaredInputs(def: WorkflowDefinition, data: Record<string, unknown>): Record<string, unknown> {
  if (!(def.input instanceof z.ZodObject)) return data;
  const shape = def.input.shape as Record<string, unknown>;
  return Object.fromEntries(Object.entries(data).filter(([field, value]) => field in shape && value !== undefined));
}

/**
 * The receiver's input for this delivery, checked as the run will check it: a delivery its
 * receiver cannot start with is refused before the event is claimed, not accepted and then lost.
 */
function startInput(def: WorkflowDefinition, given: Record<string, unknown>): Record<string, unknown> {
  const missing = inputsNoDeliveryGives(def);
  if (missing.length) {
    const message = `config.receiver_workflow_type: the receiver ${def.workflow_type} requires ${missing.join(', ')}, which no delivery gives (a delivery gives ${INGRESS_INPUTS.join(', ')})`;
    throw new ApiError(400, 'RECEIVER_INPUT_INVALID', message, missing.map((field) => ({ field: `initial_data.${field}`, rule: 'required', message: 'no delivery gives it' })));
  }
  const data = declaredInputs(def, given);
  const parsed = def.input.safeParse(data);
  if (parsed.success) return data;
  const problems = zodProblems(parsed.error, data, 'initial_data');
  const code = problems.some((p) => p.field === 'initial_data.payload')
    ? 'PAYLOAD_INVALID'
    : problems.some((p) => p.field === 'initial_data.signature')
      ? 'SIGNATURE_MALFORMED'
      : 'RECEIVER_INPUT_INVALID';
  const message = `the receiver ${def.workflow_type} cannot start with this delivery: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`;
  throw new ApiError(400, code, message, problems);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const refused = (code: string, message: string) => new ApiError(400, code, message);

@Injectable()
export class PaymentsIngressService {
  private readonly projection;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(TEMPORAL_CLIENTS) private readonly temporal: TemporalClients,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CONNECTIONS) private readonly connections: ConnectionStore,
    private readonly catalog: CatalogService,
  ) {
    this.projection = createProjection(database.db);
  }

  private get db() {
    return this.database.db;
  }

  /**
   * Verifies one delivery with the same function the receive run uses, then starts the
   * connection's receiver chain, once per event id: nothing is started or stored for a refusal.
   * Each request spends one rate limit: a verified one its connection's, any other its sender's.
   */
  async receive(connectionUuid: string, body: Buffer, signature: string | undefined, limits: IngressLimits): Promise<IngressAnswer> {
    const connection = await this.paymentsConnection(connectionUuid).catch(async (err: unknown) => {
      if (err instanceof ApiError) await limits.refused();
      throw err;
    });
    const candidates = candidateSecrets(this.connections.decrypt(connection));
    let matched: number;
    try {
      matched = verifySignature({
        payload: body,
        header: signature,
        secrets: candidates.map((c) => c.secret),
        toleranceSeconds: this.config.paymentsWebhookToleranceSeconds,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
    } catch (err) {
      if (!(err instanceof SignatureRefusal)) throw err;
      await limits.refused();
      throw signatureRefused(err);
    }
    await limits.verified();
    const { payload, event } = this.parse(body);
    const org = connection.organizationUuid;
    // Before the event is claimed: a receiver that cannot start (a deleted composition, an input it refuses) stores nothing.
    const receiver = await this.catalog.resolve(receiverWorkflowType(connection.config as Record<string, unknown>), org);
    const input = startInput(receiver, { cloud_connection_uuid: connectionUuid, payload, signature: signature!, webhook_secret_key: candidates[matched].key });
    const workflowId = chainWorkflowId(connectionUuid, event.event_id);
    const claim = await claimEvent(this.db, { connection_uuid: connectionUuid, event_id: event.event_id, organization_uuid: org, workflow_id: workflowId });
    const duplicate = { status: 200 as const, body: { received: true as const, duplicate: true as const, workflow_id: claim.workflow_id } };
    if (!claim.claimed && (claim.workflow_id !== workflowId || (await this.runExists(claim.workflow_id, org)))) return duplicate;
    // Claimed by a delivery that did not get to start the chain: this delivery (its signature) is the one handed on.
    if (!claim.claimed) await this.db.update(paymentEvents).set({ acceptedAt: new Date() }).where(and(eq(paymentEvents.connectionUuid, connectionUuid), eq(paymentEvents.eventId, event.event_id)));
    // Started at most once, by its id.
    let started: boolean;
    try {
      started = await this.start(receiver, org, workflowId, input);
    } catch (err) {
      // A start refused for good gives the event back, or every later delivery of it would be a
      // duplicate of a run that does not exist; an unreachable Temporal or database keeps the
      // claim, and the provider's retry completes it.
      if (!isTemporalUnavailable(err) && !isDatabaseUnavailable(err)) await this.release(connectionUuid, event.event_id, workflowId);
      throw err;
    }
    if (!started) return duplicate;
    return { status: 202, body: { received: true, workflow_id: workflowId, event_id: event.event_id } };
  }

  /** Another organization's connections are as unknown as missing ones: the uuid is the only name the route has. */
  private async paymentsConnection(connectionUuid: string) {
    const unknown = notFound(`payments connection ${connectionUuid}`);
    if (!z.uuid().safeParse(connectionUuid).success) throw unknown;
    const [row] = await this.db.select().from(connections).where(eq(connections.connectionUuid, connectionUuid));
    if (!row || row.plugin !== 'payments') throw unknown;
    return row;
  }

  private parse(body: Buffer): { payload: string; event: NormalisedEvent } {
    let payload: string;
    try {
      payload = utf8.decode(body);
    } catch {
      throw refused('PAYLOAD_INVALID', 'the payload is not UTF-8 JSON');
    }
    try {
      return { payload, event: normaliseEvent(payload) };
    } catch (err) {
      if (err instanceof PayloadInvalid) throw refused(err.code, err.message);
      throw err;
    }
  }

  private async release(connectionUuid: string, eventId: string, workflowId: string) {
    await this.db
      .delete(paymentEvents)
      .where(and(eq(paymentEvents.connectionUuid, connectionUuid), eq(paymentEvents.eventId, eventId), eq(paymentEvents.workflowId, workflowId)));
  }

  private async runExists(workflowId: string, org: string) {
    const rows = await this.db.select({ id: runs.workflowId }).from(runs).where(and(eq(runs.workflowId, workflowId), eq(runs.organizationUuid, org)));
    return rows.length > 0;
  }

  /** Registered before answering, so the workflow_id of a 202 is readable at once. False when a concurrent delivery started it. */
  private start(def: WorkflowDefinition, org: string, workflowId: string, initialData: Record<string, unknown>): Promise<boolean> {
    return launchRun(this.temporal, this.projection, {
      def,
      organizationUuid: org,
      workflowId,
      initialData,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  }
}
