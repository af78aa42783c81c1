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
    // Set when an end user started the run: only that user reads it, through that app.
    endUserUuid: text('end_user_uuid'),
    clientUuid: text('client_uuid'),
    // Temporal's firstExecutionRunId of the execution chain the row projects, the run's latest
    // attempt (continue-as-new keeps it; a retry is a chain of its own): another chain under the
    // same workflow id is not this run. Null on rows written before it was recorded.
    firstExecutionRunId: text('first_execution_run_id'),
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
    // Most runs have neither a schedule nor an end user: these two index only the runs that do.
    index('runs_org_schedule_created_idx')
      .on(t.organizationUuid, t.scheduleId, ...newestFirst(t))
      .where(sql`${t.scheduleId} is not null`),
    index('runs_org_end_user_created_idx')
      .on(t.organizationUuid, t.endUserUuid, ...newestFirst(t))
      .where(sql`${t.endUserUuid} is not null`),
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
    grantedAt: timestamp('granted_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
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

/**
 * End-user sign-in (issue 11). An app is an organization's OIDC client: public, identified by its
 * client_key alone (PKCE replaces a client secret), with exact redirect URIs.
 */
export const identityApps = pgTable(
  'identity_apps',
  {
    clientUuid: text('client_uuid').primaryKey(),
    clientKey: text('client_key').notNull().unique(),
    organizationUuid: text('organization_uuid').notNull(),
    name: text('name').notNull(),
    redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('identity_apps_org_created_idx').on(t.organizationUuid, t.createdAt)],
);

/** An app's own users: not organization members, no seat. */
export const endUsers = pgTable(
  'end_users',
  {
    endUserUuid: text('end_user_uuid').primaryKey(),
    organizationUuid: text('organization_uuid').notNull(),
    clientUuid: text('client_uuid')
      .notNull()
      .references(() => identityApps.clientUuid),
    // Lower-cased on the way in: one account per address per app.
    email: text('email').notNull(),
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
    passwordHash: text('password_hash').notNull(),
    // AES-256-GCM (activities/secret-box.ts), like connection secrets.
    totpSecret: text('totp_secret'),
    totpConfirmedAt: timestamp('totp_confirmed_at', { withTimezone: true }),
    // The RFC 6238 time step of the last code accepted: a code is never accepted twice (RFC 6238 §5.2).
    totpLastStep: integer('totp_last_step'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('end_users_client_email_idx').on(t.clientUuid, t.email)],
);

/** Server-side login sessions behind the login host's cookie, so that one can be revoked. */
export const loginSessions = pgTable(
  'login_sessions',
  {
    sid: text('sid').primaryKey(),
    endUserUuid: text('end_user_uuid')
      .notNull()
      .references(() => endUsers.endUserUuid),
    clientUuid: text('client_uuid').notNull(),
    organizationUuid: text('organization_uuid').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('login_sessions_end_user_idx').on(t.endUserUuid)],
);

/**
 * Authorization codes by sha256 (codes are 256-bit random). issued_jtis records what redeeming
 * issued, so that a replayed code revokes it (RFC 6749 §4.1.2).
 */
export const authorizationCodes = pgTable('authorization_codes', {
  codeHash: text('code_hash').primaryKey(),
  clientUuid: text('client_uuid').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  sid: text('sid').notNull(),
  endUserUuid: text('end_user_uuid').notNull(),
  nonce: text('nonce'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  redeemedAt: timestamp('redeemed_at', { withTimezone: true }),
  issuedJtis: jsonb('issued_jtis').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
});

/** Token ids refused before they expire (a replayed code's tokens). */
export const revokedTokens = pgTable('revoked_tokens', {
  jti: text('jti').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

/** RS256 signing keys; the newest unretired one signs, all unretired ones verify. */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  // AES-256-GCM (activities/secret-box.ts) of the private JWK, bound to the kid.
  privateJwkCiphertext: text('private_jwk_ciphertext').notNull(),
  publicJwk: jsonb('public_jwk').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  retiredAt: timestamp('retired_at', { withTimezone: true }),
});

/** Single-use email links (verification, password reset), by sha256 of the token. */
export const endUserEmailTokens = pgTable(
  'end_user_email_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    endUserUuid: text('end_user_uuid')
      .notNull()
      .references(() => endUsers.endUserUuid),
    purpose: text('purpose').$type<'verify_email' | 'password_reset'>().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('end_user_email_tokens_end_user_idx').on(t.endUserUuid)],
);

/** Failed sign-in counters, keyed 'account:<end_user_uuid>' or 'client:<address>'. */
export const signInThrottle = pgTable('sign_in_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  windowStartedAt: timestamp('window_started_at', { withTimezone: true }).notNull(),
  lockedUntil: timestamp('locked_until', { withTimezone: true }),
});
