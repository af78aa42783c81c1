import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../db/client';
import { entitlements, paymentEvents } from '../db/schema';
import type { ConnectionStore } from './connections';
import { type NormalisedEvent, normaliseEvent, PayloadInvalid } from './payments-events';
import { SignatureRefusal, verifySignature } from './payments-signature';
import { webhookSecrets } from './payments-secrets';
import { isWithinRun, workflowLineage } from '../workflows/runtime/dag-plan';

export interface ReceiveRequest {
  organization_uuid: string;
  cloud_connection_uuid: string;
  payload: string;
  signature: string;
  webhook_secret?: string;
  webhook_secret_key?: string;
}

export interface GrantRequest {
  organization_uuid: string;
  subject: string;
  source_event_id: string;
  event_type: string;
  object_id: string | null;
  event_metadata: Record<string, unknown>;
}

export interface GrantResult {
  entitlement_uuid: string;
  /** False when another run already granted for this source event (a retry of the granting run still says true). */
  granted: boolean;
  granted_at: string;
}

export interface PaymentsConfig {
  db: Database;
  connections: ConnectionStore;
  toleranceSeconds: number;
}

/**
 * The run that may act on an event is the one that claimed it: the run itself (a retry keeps
 * its workflow id) or a step of the receiver chain that claimed it, whose child ids are
 * `<chain workflow id>.<step>`.
 */
export const ownsClaim = isWithinRun;

/**
 * Records that `workflow_id` accepted the event on the connection, unless a run did first: returns
 * the run holding the claim, and whether this call made it.
 */
export async function claimEvent(db: Database, claim: { connection_uuid: string; event_id: string; organization_uuid: string; workflow_id: string }) {
  const [inserted] = await db
    .insert(paymentEvents)
    .values({ connectionUuid: claim.connection_uuid, eventId: claim.event_id, organizationUuid: claim.organization_uuid, workflowId: claim.workflow_id })
    .onConflictDoNothing()
    .returning();
  if (inserted) return { workflow_id: inserted.workflowId, claimed: true };
  return { workflow_id: (await claimantOf(db, claim.connection_uuid, claim.event_id))!, claimed: false };
}

/** The run holding the claim on an event, if any. */
async function claimantOf(db: Database, connectionUuid: string, eventId: string): Promise<string | undefined> {
  const [existing] = await db
    .select({ workflowId: paymentEvents.workflowId })
    .from(paymentEvents)
    .where(and(eq(paymentEvents.connectionUuid, connectionUuid), eq(paymentEvents.eventId, eventId)));
  return existing?.workflowId;
}

/**
 * When the ingress accepted the delivery this run (or the chain it is a step of) was started
 * for, or undefined for a run started otherwise. Read by the run's ids alone, before anything is
 * parsed: a chain that waited for a worker checks the signature's timestamp against the time the
 * delivery arrived, not against the time a worker got to it.
 */
export async function deliveryReceivedAt(db: Database, connectionUuid: string, workflowId: string): Promise<Date | undefined> {
  const lineage = workflowLineage(workflowId);
  const [row] = await db
    .select({ acceptedAt: paymentEvents.acceptedAt })
    .from(paymentEvents)
    .where(and(eq(paymentEvents.connectionUuid, connectionUuid), inArray(paymentEvents.workflowId, lineage)))
    .limit(1);
  return row?.acceptedAt;
}

/** The run a claim or a grant is recorded for; these activities run only inside workflows. */
function callingWorkflowId(): string {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('payments activities run only inside a workflow', 'definition_error');
  return execution.workflowId;
}

const refuse = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);

export function createPaymentsActivities(config: PaymentsConfig) {
  /**
   * webhook_secret if given; else the named one (missing: fail closed); else the connection's
   * default. `own`: whether it is one of the connection's secrets, the only ones that prove the
   * provider sent the event to this connection.
   */
  async function secretFor(req: ReceiveRequest): Promise<{ secret: string; own: boolean }> {
    const { secrets } = await config.connections.resolve({
      organization_uuid: req.organization_uuid,
      connection_uuid: req.cloud_connection_uuid,
      plugin: 'payments',
    });
    const stored = webhookSecrets(secrets);
    if (req.webhook_secret) {
      const own = req.webhook_secret === stored.fallback || [...stored.named.values()].includes(req.webhook_secret);
      return { secret: req.webhook_secret, own };
    }
    if (req.webhook_secret_key !== undefined) {
      const named = stored.named.get(req.webhook_secret_key);
      if (!named) {
        throw refuse(`connection ${req.cloud_connection_uuid} has no webhook secret named ${req.webhook_secret_key}`, 'WEBHOOK_SECRET_NOT_FOUND');
      }
      return { secret: named, own: true };
    }
    if (!stored.fallback) {
      throw refuse(
        `connection ${req.cloud_connection_uuid} has no default webhook_secret: name one of its webhook_secrets with webhook_secret_key`,
        'WEBHOOK_SECRET_NOT_FOUND',
      );
    }
    return { secret: stored.fallback, own: true };
  }

  return {
    /**
     * Verifies, parses and claims one delivery; nothing is parsed before the signature holds.
     * Only an event verified with the connection's own secret is claimed: one signed with a
     * secret the caller chose proves nothing about the provider, and must not turn the
     * provider's own delivery of that event id into a duplicate.
     */
    async receivePaymentEvent(req: ReceiveRequest): Promise<NormalisedEvent> {
      const { secret, own } = await secretFor(req);
      const workflowId = callingWorkflowId();
      const receivedAt = (await deliveryReceivedAt(config.db, req.cloud_connection_uuid, workflowId)) ?? new Date();
      let event: NormalisedEvent;
      try {
        verifySignature({
          payload: req.payload,
          header: req.signature,
          secrets: [secret],
          toleranceSeconds: config.toleranceSeconds,
          nowSeconds: Math.floor(receivedAt.getTime() / 1000),
        });
        event = normaliseEvent(req.payload);
      } catch (err) {
        if (err instanceof SignatureRefusal || err instanceof PayloadInvalid) throw refuse(err.message, err.code);
        throw err;
      }
      const claim = { connection_uuid: req.cloud_connection_uuid, event_id: event.event_id, organization_uuid: req.organization_uuid, workflow_id: workflowId };
      const claimant = own ? (await claimEvent(config.db, claim)).workflow_id : await claimantOf(config.db, claim.connection_uuid, claim.event_id);
      if (claimant !== undefined && !ownsClaim(claimant, workflowId)) {
        throw refuse(`event ${event.event_id} was already accepted on this connection (run ${claimant})`, 'EVENT_REPLAYED');
      }
      return event;
    },

    /** One entitlement per source event and organization: a replayed chain finds the first one. */
    async grantEntitlement(req: GrantRequest): Promise<GrantResult> {
      const workflowId = callingWorkflowId();
      const [inserted] = await config.db
        .insert(entitlements)
        .values({
          entitlementUuid: randomUUID(),
          organizationUuid: req.organization_uuid,
          subject: req.subject,
          sourceEventId: req.source_event_id,
          workflowId,
          eventType: req.event_type,
          objectId: req.object_id,
          eventMetadata: req.event_metadata,
        })
        .onConflictDoNothing()
        .returning();
      const row =
        inserted ??
        (
          await config.db
            .select()
            .from(entitlements)
            .where(and(eq(entitlements.organizationUuid, req.organization_uuid), eq(entitlements.sourceEventId, req.source_event_id)))
        )[0];
      return { entitlement_uuid: row.entitlementUuid, granted: row.workflowId === workflowId, granted_at: row.grantedAt.toISOString() };
    },
  };
}

export type PaymentsActivities = ReturnType<typeof createPaymentsActivities>;
