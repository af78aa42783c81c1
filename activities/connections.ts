import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { connections } from '../db/schema';
import { canonicalUuid } from '../src/common/uuid';
import { findPlugin } from '../src/plugins/plugins';
import { heartbeatWhileWaiting } from './provider-http';
import type { SecretBox } from './secret-box';

export type ConnectionRow = typeof connections.$inferSelect;

/** How long one activity attempt keeps retrying a connection lookup while the database is down. */
const RESOLVE_RETRY_MS = 20_000;
export type Secrets = Record<string, unknown>;

/** What anyone may see of a connection: never its secrets. */
export function connectionView(row: ConnectionRow) {
  return {
    connection_uuid: row.connectionUuid,
    plugin: row.plugin,
    name: row.name,
    config: row.config as Record<string, unknown>,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Where a stored connection's secrets may be sent (its plugin's destination field, resolved), or undefined for nowhere. */
export function connectionDestination(row: Pick<ConnectionRow, 'plugin' | 'config'>): string | undefined {
  return findPlugin(row.plugin)?.destination?.of((row.config ?? {}) as Record<string, unknown>);
}

const aad = (row: Pick<ConnectionRow, 'connectionUuid' | 'organizationUuid' | 'plugin'>) =>
  Buffer.from(`${row.connectionUuid}|${row.organizationUuid}|${row.plugin}`);

/**
 * Organizations' stored provider credentials, encrypted at rest. The
 * ciphertext is bound to its connection, organization and plugin, so a row's
 * secrets cannot be moved to another tenant by editing the table.
 */
export class ConnectionStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  private seal(row: Pick<ConnectionRow, 'connectionUuid' | 'organizationUuid' | 'plugin'>, secrets: Secrets) {
    return { secretsCiphertext: this.box.seal(Buffer.from(JSON.stringify(secrets)), aad(row)).toString('base64'), keyId: this.box.keyId };
  }

  async create(organizationUuid: string, plugin: string, name: string, secrets: Secrets, config: Record<string, unknown>) {
    const identity = { connectionUuid: randomUUID(), organizationUuid, plugin };
    const [row] = await this.db
      .insert(connections)
      .values({ ...identity, name, config, ...this.seal(identity, secrets) })
      .onConflictDoNothing()
      .returning();
    return row;
  }

  list(organizationUuid: string, plugin?: string) {
    const filters = [eq(connections.organizationUuid, organizationUuid)];
    if (plugin) filters.push(eq(connections.plugin, plugin));
    return this.db.select().from(connections).where(and(...filters)).orderBy(asc(connections.createdAt));
  }

  /**
   * By id in either case, as the API's routes take it (`z.uuid()` accepts upper case too, and a
   * run's input keeps the id as written); anything that is not a UUID names no connection.
   */
  async get(organizationUuid: string, connectionUuid: string): Promise<ConnectionRow | undefined> {
    const id = canonicalUuid(connectionUuid);
    if (!id) return undefined;
    const rows = await this.db
      .select()
      .from(connections)
      .where(and(eq(connections.organizationUuid, organizationUuid), eq(connections.connectionUuid, id)));
    return rows[0];
  }

  async update(row: ConnectionRow, changes: { name?: string; secrets?: Secrets; config?: Record<string, unknown> }) {
    const [updated] = await this.db
      .update(connections)
      .set({
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.config !== undefined ? { config: changes.config } : {}),
        ...(changes.secrets !== undefined ? this.seal(row, changes.secrets) : {}),
        updatedAt: new Date(),
      })
      .where(eq(connections.connectionUuid, row.connectionUuid))
      .returning();
    return updated;
  }

  async delete(organizationUuid: string, connectionUuid: string): Promise<boolean> {
    const deleted = await this.db
      .delete(connections)
      .where(and(eq(connections.organizationUuid, organizationUuid), eq(connections.connectionUuid, connectionUuid)))
      .returning({ id: connections.connectionUuid });
    return deleted.length > 0;
  }

  /**
   * A database that is briefly down must not fail a run: the lookup is retried
   * for a while (the activity heartbeats meanwhile), then reported retryable so
   * Temporal's policy takes over. "Not found" is an answer, never retried.
   */
  private async getThroughOutage(organizationUuid: string, connectionUuid: string): Promise<ConnectionRow | undefined> {
    const stopHeartbeat = heartbeatWhileWaiting();
    const deadline = Date.now() + RESOLVE_RETRY_MS;
    try {
      for (let delay = 250; ; delay = Math.min(delay * 2, 2_000)) {
        try {
          return await this.get(organizationUuid, connectionUuid);
        } catch {
          if (Date.now() + delay > deadline) {
            throw ApplicationFailure.retryable(`connection lookup failed: the database is not answering`, 'database_unavailable');
          }
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    } finally {
      stopHeartbeat();
    }
  }

  decrypt(row: ConnectionRow): Secrets {
    return JSON.parse(this.box.open(Buffer.from(row.secretsCiphertext, 'base64'), aad(row)).toString());
  }

  /**
   * What a workflow's activity calls: only inside the run's organization and
   * only through the plugin its type requires, with the one destination its
   * secrets may be sent to. Anything else fails the run closed, before any
   * provider call.
   */
  async resolve(request: { organization_uuid: string; connection_uuid: string; plugin: string }) {
    const row = await this.getThroughOutage(request.organization_uuid, request.connection_uuid);
    if (!row) {
      throw ApplicationFailure.nonRetryable(
        `connection ${request.connection_uuid} does not exist in this organization`,
        'connection_not_found',
      );
    }
    if (row.plugin !== request.plugin) {
      throw ApplicationFailure.nonRetryable(
        `connection ${request.connection_uuid} is a ${row.plugin} connection; this workflow type needs a ${request.plugin} connection`,
        'connection_plugin_mismatch',
      );
    }
    const field = findPlugin(row.plugin)?.destination?.field;
    const destination = connectionDestination(row);
    if (field && !destination) {
      throw ApplicationFailure.nonRetryable(
        `connection ${request.connection_uuid} has no ${field}, so its secrets may go nowhere: set config.${field} together with its secrets (PATCH /api/connections/${request.connection_uuid})`,
        'connection_destination_missing',
      );
    }
    return { secrets: this.decrypt(row), config: row.config as Record<string, unknown>, destination };
  }
}
