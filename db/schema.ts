import { sql } from 'drizzle-orm';
import {
  boolean,
  uniqueIndex,
  index,
  integer,
  jsonb,
  pgTable,
  type ExtraConfigColumn,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';

export const organizations = pgTable('organizations', {
  organizationUuid: text('organization_uuid').primaryKey(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const apiTokens = pgTable(
  'api_tokens',
  {
    tokenId: text('token_id').primaryKey(),
    organizationUuid: text('organization_uuid')
      .notNull()
      .references(() => organizations.organizationUuid),
    // sha256 of the token: tokens are 256-bit random, so a slow KDF buys nothing.
    tokenHash: text('token_hash').notNull().unique(),
    username: text('username').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_tokens_org_idx').on(t.organizationUuid)],
);

const newestFirst = (t: { createdAt: ExtraConfigColumn; workflowId: ExtraConfigColumn }) =>
  [t.createdAt.desc().nullsFirst(), t.workflowId.desc().nullsFirst()] as const;

export const runs = pgTable(
  'runs',
  {
    workflowId: text('workflow_id').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    workflowType: text('workflow_type').notNull(),
    version: text('version').notNull(),
    stateName: text('state_name').notNull(),
    isTerminal: boolean('is_terminal').notNull().default(false),
    status: text('status').notNull(),
    attempt: integer('attempt').notNull().default(1),
    lastSeq: integer('last_seq').notNull().default(0),
    stateData: jsonb('state_data'),
    // The schedule whose action started the run, if any (GET /workflows?schedule_id=).
    scheduleId: text('schedule_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  // One index per list filter, each in the list's order (newest first), so a page is read off the
  // index instead of sorting the organization's runs. NULLS FIRST is what ORDER BY … DESC means in
  // Postgres; drizzle's bare .desc() emits NULLS LAST, which the planner cannot use for that order.
  (t) => [
    index('runs_org_created_idx').on(t.organizationUuid, ...newestFirst(t)),
    index('runs_org_type_created_idx').on(t.organizationUuid, t.workflowType, ...newestFirst(t)),
    index('runs_org_status_created_idx').on(t.organizationUuid, t.status, ...newestFirst(t)),
    index('runs_org_state_created_idx').on(t.organizationUuid, t.stateName, ...newestFirst(t)),
    index('runs_org_schedule_created_idx').on(t.organizationUuid, t.scheduleId, ...newestFirst(t)),
  ],
);

export const transitions = pgTable(
  'transitions',
  {
    workflowId: text('workflow_id')
      .notNull()
      .references(() => runs.workflowId),
    seq: integer('seq').notNull(),
    fromState: text('from_state').notNull(),
    toState: text('to_state').notNull(),
    action: text('action').notNull(),
    attempt: integer('attempt').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    data: jsonb('data').notNull().default(sql`'{}'::jsonb`),
  },
  (t) => [primaryKey({ columns: [t.workflowId, t.seq] })],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    organizationUuid: text('organization_uuid').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    workflowId: text('workflow_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationUuid, t.key] })],
);

export const connections = pgTable(
  'connections',
  {
    connectionUuid: text('connection_uuid').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    plugin: text('plugin').notNull(),
    name: text('name').notNull(),
    // AES-256-GCM (activities/secret-box.ts), bound to (connection, organization, plugin).
    secretsCiphertext: text('secrets_ciphertext').notNull(),
    keyId: text('key_id').notNull(),
    config: jsonb('config').notNull().default(sql`'{}'::jsonb`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('connections_org_name_idx').on(t.organizationUuid, t.name)],
);

/**
 * An organization's Temporal Schedules, as created: Temporal keeps a cron only as the calendar
 * it compiles to, and lists schedules only eventually, so the API lists and answers from here and
 * asks Temporal for what changes (paused, next and recent actions). initial_data is redacted.
 */
export const schedules = pgTable(
  'schedules',
  {
    scheduleId: text('schedule_id').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    workflowType: text('workflow_type').notNull(),
    initialData: jsonb('initial_data').notNull(),
    cron: text('cron'),
    intervalSeconds: integer('interval_seconds'),
    timezone: text('timezone').notNull(),
    overlap: text('overlap').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('schedules_org_created_idx').on(t.organizationUuid, t.createdAt.desc().nullsFirst(), t.scheduleId.desc().nullsFirst())],
);

/**
 * Provider events accepted per payments connection: the first delivery of an event id claims it
 * for its run (the ingress's receiver chain, or a receive run started directly), so a repeated
 * delivery answers with that run and a replayed one fails EVENT_REPLAYED.
 */
export const paymentEvents = pgTable(
  'payment_events',
  {
    connectionUuid: text('connection_uuid').notNull(),
    eventId: text('event_id').notNull(),
    organizationUuid: text('organization_uuid').notNull(),
    workflowId: text('workflow_id').notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.connectionUuid, t.eventId] }), index('payment_events_connection_workflow_idx').on(t.connectionUuid, t.workflowId)],
);

/** Access granted by payments.access.grant_on_payment: one per source event and organization. */
export const entitlements = pgTable(
  'entitlements',
  {
    entitlementUuid: text('entitlement_uuid').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    subject: text('subject').notNull(),
    sourceEventId: text('source_event_id').notNull(),
    workflowId: text('workflow_id').notNull(),
    eventType: text('event_type').notNull(),
    objectId: text('object_id'),
    eventMetadata: jsonb('event_metadata').notNull().default(sql`'{}'::jsonb`),
    grantedAt: timestamp('granted_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('entitlements_org_source_event_idx').on(t.organizationUuid, t.sourceEventId),
    index('entitlements_org_granted_idx').on(t.organizationUuid, t.grantedAt.desc().nullsFirst(), t.entitlementUuid.desc().nullsFirst()),
    index('entitlements_org_subject_granted_idx').on(
      t.organizationUuid,
      t.subject,
      t.grantedAt.desc().nullsFirst(),
      t.entitlementUuid.desc().nullsFirst(),
    ),
  ],
);

/**
 * Webhook redirect endpoints: a public ingress URL of ours that forwards what it receives, signed, to
 * the organization's target_url. The signing secret is AES-256-GCM sealed (activities/secret-box.ts),
 * bound to (endpoint, organization); secret_ref names the connection secret it was copied from.
 */
export const hookEndpoints = pgTable(
  'hook_endpoints',
  {
    endpointUuid: text('endpoint_uuid').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    name: text('name').notNull(),
    targetUrl: text('target_url').notNull(),
    secretCiphertext: text('secret_ciphertext').notNull(),
    keyId: text('key_id').notNull(),
    secretSource: text('secret_source').notNull(),
    secretRef: text('secret_ref'),
    state: text('state').notNull().default('active'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('hook_endpoints_org_name_idx').on(t.organizationUuid, t.name)],
);

/** One received event: the body exactly as received, its state and every delivery attempt. */
export const hookEvents = pgTable(
  'hook_events',
  {
    eventUuid: text('event_uuid').primaryKey(),
    endpointUuid: text('endpoint_uuid')
      .notNull()
      .references(() => hookEndpoints.endpointUuid, { onDelete: 'cascade' }),
    organizationUuid: text('organization_uuid').notNull(),
    body: text('body').notNull(),
    headers: jsonb('headers').notNull().default(sql`'{}'::jsonb`),
    state: text('state').notNull().default('pending'),
    /** [{at, status_code, latency_ms, error?}] in attempt order. */
    attempts: jsonb('attempts').notNull().default(sql`'[]'::jsonb`),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true }),
    expiredAt: timestamp('expired_at', { withTimezone: true }),
  },
  (t) => [index('hook_events_endpoint_received_idx').on(t.endpointUuid, t.receivedAt.desc().nullsFirst(), t.eventUuid.desc().nullsFirst())],
);

/**
 * An organization's composed workflow types (virtual.<composition_uuid>@<version>). Versions are
 * immutable: a PUT adds the next one, and a run of an earlier version keeps the plan it started with.
 */
export const compositions = pgTable(
  'compositions',
  {
    compositionUuid: text('composition_uuid').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    latestVersion: integer('latest_version').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('compositions_org_created_idx').on(t.organizationUuid, t.createdAt.desc().nullsFirst(), t.compositionUuid.desc().nullsFirst())],
);

export const compositionVersions = pgTable(
  'composition_versions',
  {
    compositionUuid: text('composition_uuid')
      .notNull()
      .references(() => compositions.compositionUuid),
    version: integer('version').notNull(),
    name: text('name').notNull(),
    // As given (steps) and compiled (the plan a run carries: layers in dependency order).
    steps: jsonb('steps').notNull(),
    plan: jsonb('plan').notNull(),
    exposedToEndUsers: boolean('exposed_to_end_users').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.compositionUuid, t.version] })],
);
