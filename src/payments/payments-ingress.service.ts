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
import type { AppConfig } from '../config';
import { launchRun } from '../runs/launch';
import type { TemporalClients } from '../temporal-clients';
import { chainWorkflowId, receiverWorkflowType } from './receiver-chain';

export type IngressAnswer =
  | { status: 202; body: { received: true; workflow_id: string; event_id: string } }
  | { status: 200; body: { received: true; duplicate: true; workflow_id: string } };

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
   */
  async receive(connectionUuid: string, body: Buffer, signature: string | undefined): Promise<IngressAnswer> {
    const connection = await this.paymentsConnection(connectionUuid);
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
      if (err instanceof SignatureRefusal) throw refused(err.code, err.message);
      throw err;
    }
    const { payload, event } = this.parse(body);
    const org = connection.organizationUuid;
    // Before the event is claimed: a receiver that cannot start (a deleted composition) stores nothing.
    const receiver = await this.catalog.resolve(receiverWorkflowType(connection.config as Record<string, unknown>), org);
    const workflowId = chainWorkflowId(connectionUuid, event.event_id);
    const claim = await claimEvent(this.db, { connection_uuid: connectionUuid, event_id: event.event_id, organization_uuid: org, workflow_id: workflowId });
    const duplicate = { status: 200 as const, body: { received: true as const, duplicate: true as const, workflow_id: claim.workflow_id } };
    if (!claim.claimed && (claim.workflow_id !== workflowId || (await this.runExists(claim.workflow_id, org)))) return duplicate;
    // Claimed by a delivery that did not get to start the chain: this delivery (its signature) is the one handed on.
    if (!claim.claimed) await this.db.update(paymentEvents).set({ acceptedAt: new Date() }).where(and(eq(paymentEvents.connectionUuid, connectionUuid), eq(paymentEvents.eventId, event.event_id)));
    // Started at most once, by its id.
    const input = { cloud_connection_uuid: connectionUuid, payload, signature: signature!, webhook_secret_key: candidates[matched].key };
    const started = await this.start(receiver, org, workflowId, input);
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
      initialData: declaredInputs(def, initialData),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  }
}
