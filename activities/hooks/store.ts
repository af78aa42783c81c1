import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { hookEndpoints, hookEvents } from '../../db/schema';
import type { SecretBox } from '../secret-box';

export type HookEndpointRow = typeof hookEndpoints.$inferSelect;
export type HookEventRow = typeof hookEvents.$inferSelect;
export type SecretSource = 'generated' | 'secret_ref';
export type AcknowledgeOutcome = { row: HookEventRow } | { refused: 'event_not_found' | 'event_expired' | 'event_not_delivered' };

export interface DeliveryAttempt {
  at: string;
  /** The target's answer; null when none came (time-out, connection refused, policy). */
  status_code: number | null;
  latency_ms: number;
  error?: string;
}

/** 32 random bytes; the whole string (prefix included) is the HMAC key. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

const aad = (row: Pick<HookEndpointRow, 'endpointUuid' | 'organizationUuid'>) => Buffer.from(`hook|${row.endpointUuid}|${row.organizationUuid}`);

/**
 * Carried by hook.receive-webhook's post to an ingress alone: the ingress stores that event without
 * delivering it, since the run that posted it has it delivered (layer 3 of the webhook Dag).
 */
export const TEST_EVENT_MARK_HEADER = 'x-hook-test-event';

const markAad = (endpointUuid: string) => Buffer.from(`hook-test-event|${endpointUuid}`);
const digest = (body: string | Buffer) => createHash('sha256').update(body).digest();

/** The ingress URL of an endpoint, under the API's public base URL. */
export const ingressUrl = (publicApiUrl: string, endpointUuid: string) => `${publicApiUrl.replace(/\/+$/, '')}/api/hooks/r/${endpointUuid}`;

/** What anyone may see of an endpoint: never its secret. */
export function endpointView(row: HookEndpointRow, publicApiUrl: string) {
  return {
    endpoint_uuid: row.endpointUuid,
    name: row.name,
    target_url: row.targetUrl,
    ingress_url: ingressUrl(publicApiUrl, row.endpointUuid),
    secret_source: row.secretSource as SecretSource,
    secret_ref: row.secretRef,
    state: row.state,
    created_at: row.createdAt.toISOString(),
  };
}

/** Why an event cannot be acknowledged, as the API's 409 and hook.acknowledge-event's failure say it. */
export const ACKNOWLEDGE_REFUSALS = {
  event_expired: (eventUuid: string) => `event ${eventUuid} has expired and cannot be acknowledged`,
  event_not_delivered: (eventUuid: string) => `event ${eventUuid} has not been delivered (state pending): replay it, then acknowledge it`,
};

export function eventView(row: HookEventRow) {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    event_uuid: row.eventUuid,
    endpoint_uuid: row.endpointUuid,
    state: row.state,
    body: row.body,
    headers: row.headers as Record<string, string>,
    received_at: row.receivedAt.toISOString(),
    delivered_at: iso(row.deliveredAt),
    acknowledged_at: iso(row.acknowledgedAt),
    expired_at: iso(row.expiredAt),
    attempts: row.attempts as DeliveryAttempt[],
  };
}

/**
 * Redirect endpoints and their events. Every read and write but the ingress's endpoint lookup is
 * scoped to an organization; the signing secret is sealed, bound to its endpoint and organization.
 */
export class HookStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  private seal(row: Pick<HookEndpointRow, 'endpointUuid' | 'organizationUuid'>, secret: string) {
    return { secretCiphertext: this.box.seal(Buffer.from(secret), aad(row)).toString('base64'), keyId: this.box.keyId };
  }

  secretOf(row: HookEndpointRow): string {
    return this.box.open(Buffer.from(row.secretCiphertext, 'base64'), aad(row)).toString();
  }

  /**
   * The value of TEST_EVENT_MARK_HEADER for this body posted to this endpoint: sealed under the
   * service's key, so no outside sender can make one to keep a real event from being delivered.
   */
  testEventMark(endpointUuid: string, body: string): string {
    return this.box.seal(digest(body), markAad(endpointUuid)).toString('base64url');
  }

  isTestEventMark(endpointUuid: string, body: Buffer, mark: string): boolean {
    let sealed: Buffer;
    try {
      sealed = this.box.open(Buffer.from(mark, 'base64url'), markAad(endpointUuid));
    } catch {
      return false;
    }
    return sealed.length === 32 && timingSafeEqual(sealed, digest(body));
  }

  /** undefined when the organization already has an endpoint of that name. */
  async createEndpoint(
    organizationUuid: string,
    fields: { name: string; targetUrl: string; secret: string; secretSource: SecretSource; secretRef?: string },
  ): Promise<HookEndpointRow | undefined> {
    const identity = { endpointUuid: randomUUID(), organizationUuid };
    const [row] = await this.db
      .insert(hookEndpoints)
      .values({
        ...identity,
        name: fields.name,
        targetUrl: fields.targetUrl,
        secretSource: fields.secretSource,
        secretRef: fields.secretRef ?? null,
        ...this.seal(identity, fields.secret),
      })
      .onConflictDoNothing()
      .returning();
    return row;
  }

  async endpointByName(organizationUuid: string, name: string): Promise<HookEndpointRow | undefined> {
    const rows = await this.db
      .select()
      .from(hookEndpoints)
      .where(and(eq(hookEndpoints.organizationUuid, organizationUuid), eq(hookEndpoints.name, name)));
    return rows[0];
  }

  async endpoint(organizationUuid: string, endpointUuid: string): Promise<HookEndpointRow | undefined> {
    const rows = await this.db
      .select()
      .from(hookEndpoints)
      .where(and(eq(hookEndpoints.organizationUuid, organizationUuid), eq(hookEndpoints.endpointUuid, endpointUuid)));
    return rows[0];
  }

  /** The ingress knows only the endpoint id: the unguessable id is what admits a sender. */
  async activeEndpoint(endpointUuid: string): Promise<HookEndpointRow | undefined> {
    const rows = await this.db
      .select()
      .from(hookEndpoints)
      .where(and(eq(hookEndpoints.endpointUuid, endpointUuid), eq(hookEndpoints.state, 'active')));
    return rows[0];
  }

  listEndpoints(organizationUuid: string) {
    return this.db.select().from(hookEndpoints).where(eq(hookEndpoints.organizationUuid, organizationUuid)).orderBy(hookEndpoints.createdAt);
  }

  /** Its events go with it (ON DELETE CASCADE). */
  async deleteEndpoint(organizationUuid: string, endpointUuid: string): Promise<boolean> {
    const deleted = await this.db
      .delete(hookEndpoints)
      .where(and(eq(hookEndpoints.organizationUuid, organizationUuid), eq(hookEndpoints.endpointUuid, endpointUuid)))
      .returning({ id: hookEndpoints.endpointUuid });
    return deleted.length > 0;
  }

  async rotateSecret(row: HookEndpointRow, secret: string): Promise<HookEndpointRow> {
    const [updated] = await this.db
      .update(hookEndpoints)
      .set({ ...this.seal(row, secret), secretSource: 'generated', secretRef: null })
      .where(eq(hookEndpoints.endpointUuid, row.endpointUuid))
      .returning();
    return updated;
  }

  async insertEvent(endpoint: HookEndpointRow, body: string, headers: Record<string, string>): Promise<HookEventRow> {
    const [row] = await this.db
      .insert(hookEvents)
      .values({ eventUuid: randomUUID(), endpointUuid: endpoint.endpointUuid, organizationUuid: endpoint.organizationUuid, body, headers })
      .returning();
    return row;
  }

  async event(organizationUuid: string, eventUuid: string): Promise<HookEventRow | undefined> {
    const rows = await this.db
      .select()
      .from(hookEvents)
      .where(and(eq(hookEvents.organizationUuid, organizationUuid), eq(hookEvents.eventUuid, eventUuid)));
    return rows[0];
  }

  /** The endpoint's event that was posted with this X-Request-Id, if any (the ingress keeps that header). */
  async eventByRequestId(organizationUuid: string, endpointUuid: string, requestId: string): Promise<HookEventRow | undefined> {
    const rows = await this.db
      .select()
      .from(hookEvents)
      .where(
        and(
          eq(hookEvents.organizationUuid, organizationUuid),
          eq(hookEvents.endpointUuid, endpointUuid),
          sql`${hookEvents.headers}->>'x-request-id' = ${requestId}`,
        ),
      )
      .limit(1);
    return rows[0];
  }

  /** Whether any organization's event has this id: a request carrying one as Webhook-Id is our own delivery. */
  async eventExists(eventUuid: string): Promise<boolean> {
    const rows = await this.db.select({ id: hookEvents.eventUuid }).from(hookEvents).where(eq(hookEvents.eventUuid, eventUuid));
    return rows.length > 0;
  }

  listEvents(organizationUuid: string, endpointUuid: string, limit: number) {
    return this.db
      .select()
      .from(hookEvents)
      .where(and(eq(hookEvents.organizationUuid, organizationUuid), eq(hookEvents.endpointUuid, endpointUuid)))
      .orderBy(desc(hookEvents.receivedAt), desc(hookEvents.eventUuid))
      .limit(limit);
  }

  /**
   * Appends the attempt; a 2xx moves a pending or delivered event to delivered. An acknowledged
   * event stays acknowledged, and an expired one stays expired: a delivery already on its way when
   * the event expired (a retry) is recorded, and revives nothing.
   */
  async recordAttempt(eventUuid: string, attempt: DeliveryAttempt, delivered: boolean): Promise<HookEventRow> {
    const [row] = await this.db
      .update(hookEvents)
      .set({
        attempts: sql`${hookEvents.attempts} || ${JSON.stringify([attempt])}::jsonb`,
        ...(delivered
          ? {
              state: sql`CASE WHEN ${hookEvents.state} IN ('acknowledged', 'expired') THEN ${hookEvents.state} ELSE 'delivered' END`,
              deliveredAt: sql`CASE WHEN ${hookEvents.state} = 'expired' THEN ${hookEvents.deliveredAt} ELSE ${attempt.at}::timestamptz END`,
            }
          : {}),
      })
      .where(eq(hookEvents.eventUuid, eventUuid))
      .returning();
    return row;
  }

  /**
   * pending → delivered → acknowledged: only a delivered event may be acknowledged, once
   * (acknowledging again keeps the first time). A pending one was never received by the target,
   * and an expired one is final.
   */
  async acknowledge(organizationUuid: string, eventUuid: string): Promise<AcknowledgeOutcome> {
    const [row] = await this.db
      .update(hookEvents)
      .set({ state: 'acknowledged', acknowledgedAt: sql`COALESCE(${hookEvents.acknowledgedAt}, now())` })
      .where(
        and(eq(hookEvents.organizationUuid, organizationUuid), eq(hookEvents.eventUuid, eventUuid), inArray(hookEvents.state, ['delivered', 'acknowledged'])),
      )
      .returning();
    if (row) return { row };
    const current = await this.event(organizationUuid, eventUuid);
    if (!current) return { refused: 'event_not_found' };
    return { refused: current.state === 'expired' ? 'event_expired' : 'event_not_delivered' };
  }

  /** Pending events of the endpoint received before `cutoff` become expired; returns their ids. */
  async expirePending(organizationUuid: string, endpointUuid: string, cutoff: Date): Promise<string[]> {
    const rows = await this.db
      .update(hookEvents)
      .set({ state: 'expired', expiredAt: new Date() })
      .where(
        and(
          eq(hookEvents.organizationUuid, organizationUuid),
          eq(hookEvents.endpointUuid, endpointUuid),
          eq(hookEvents.state, 'pending'),
          lt(hookEvents.receivedAt, cutoff),
        ),
      )
      .returning({ id: hookEvents.eventUuid });
    return rows.map((r) => r.id).sort();
  }
}
