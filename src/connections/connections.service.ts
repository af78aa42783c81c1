import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { connectionDestination, connectionView, type ConnectionRow, type ConnectionStore } from '../../activities/connections';
import { literalAddressProblem, outboundUrlProblem } from '../../activities/outbound';
import type { Principal } from '../auth/principal';
import { ApiError, type FieldProblem, notFound, validationFailed } from '../common/api-error';
import { CONFIG, CONNECTIONS } from '../common/di';
import { zodProblems } from '../common/validation';
import type { AppConfig } from '../config';
import { findPlugin, plugins } from '../plugins/plugins';
import { CompositionsService } from '../compositions/compositions.service';
import { INGRESS_INPUTS, inputsNoDeliveryGives } from '../payments/receiver-chain';

const name = z.string().trim().min(1).max(100);
/** One plugin at most: `?plugin=a&plugin=b` is refused, not read as no filter. */
export const listQuery = z.strictObject({ plugin: z.string().max(100).optional().describe('Only connections of this plugin (empty: all)') });
export type ListQuery = z.output<typeof listQuery>;

export const createBody = z.strictObject({
  plugin: z.string().min(1),
  name,
  secrets: z.record(z.string(), z.unknown()),
  config: z.record(z.string(), z.unknown()).default({}),
});
export const updateBody = z.strictObject({
  name: name.optional(),
  secrets: z.record(z.string(), z.unknown()).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});
export type CreateBody = z.output<typeof createBody>;
export type UpdateBody = z.output<typeof updateBody>;

@Injectable()
export class ConnectionsService {
  constructor(
    @Inject(CONNECTIONS) private readonly store: ConnectionStore,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly compositions: CompositionsService,
  ) {}

  private validatePluginFields(pluginName: string, secrets?: unknown, config?: unknown) {
    const plugin = findPlugin(pluginName);
    if (!plugin) {
      throw validationFailed([
        { field: 'plugin', rule: 'one_of', message: `must be one of ${plugins.map((p) => p.name).join(', ')}` },
      ]);
    }
    const problems: FieldProblem[] = [];
    const parsedSecrets = secrets === undefined ? undefined : plugin.secrets.safeParse(secrets);
    const parsedConfig = config === undefined ? undefined : plugin.config.safeParse(config);
    if (parsedSecrets && !parsedSecrets.success) problems.push(...zodProblems(parsedSecrets.error, secrets, 'secrets'));
    if (parsedConfig && !parsedConfig.success) problems.push(...zodProblems(parsedConfig.error, config, 'config'));
    const destination = plugin.destination && parsedConfig?.success ? plugin.destination.of(parsedConfig.data as Record<string, unknown>) : undefined;
    const outbound =
      destination === undefined
        ? undefined
        : (outboundUrlProblem(destination, this.config.allowHttpHosts) ?? literalAddressProblem(destination, this.config.outboundAllow));
    if (outbound) problems.push({ field: `config.${plugin.destination!.field}`, rule: 'outbound_policy', message: outbound });
    if (problems.length) throw validationFailed(problems);
    return {
      secrets: parsedSecrets?.data as Record<string, unknown> | undefined,
      config: parsedConfig?.data as Record<string, unknown> | undefined,
    };
  }

  /**
   * A payments connection's receiver is started by the ingress with what a delivery gives: a
   * composition requiring any other input could never start, and every event would be refused.
   * One the organization does not have is left to the ingress (404 at delivery, nothing stored).
   */
  private async checkReceiver(principal: Principal, plugin: string, config: Record<string, unknown> | undefined) {
    const type = config?.receiver_workflow_type;
    if (plugin !== 'payments' || typeof type !== 'string') return;
    const def = await this.compositions.findDefinition(principal.organization_uuid, type);
    const missing = def ? inputsNoDeliveryGives(def) : [];
    if (!missing.length) return;
    const message = `${type} requires ${missing.join(', ')}, which no delivery gives: its free inputs may only be ${INGRESS_INPUTS.join(', ')}, or optional`;
    throw validationFailed([{ field: 'config.receiver_workflow_type', rule: 'receiver_inputs', message }]);
  }

  async create(principal: Principal, body: CreateBody) {
    const { secrets, config } = this.validatePluginFields(body.plugin, body.secrets, body.config);
    await this.checkReceiver(principal, body.plugin, config);
    const row = await this.store.create(principal.organization_uuid, body.plugin, body.name, secrets!, config!);
    if (!row) throw new ApiError(409, 'connection_name_taken', `a connection named "${body.name}" already exists`);
    const view = connectionView(row);
    return { connection_uuid: view.connection_uuid, plugin: view.plugin, name: view.name, created_at: view.created_at };
  }

  async list(principal: Principal, plugin?: string) {
    const rows = await this.store.list(principal.organization_uuid, plugin);
    return { connections: rows.map(connectionView) };
  }

  /** Another organization's connection is reported exactly like a missing one. */
  private async require(principal: Principal, connectionUuid: string) {
    const row = await this.store.get(principal.organization_uuid, connectionUuid);
    if (!row) throw notFound(`connection ${connectionUuid}`);
    return row;
  }

  async get(principal: Principal, connectionUuid: string) {
    return connectionView(await this.require(principal, connectionUuid));
  }

  async update(principal: Principal, connectionUuid: string, body: UpdateBody) {
    const row = await this.require(principal, connectionUuid);
    const { secrets, config } = this.validatePluginFields(row.plugin, body.secrets, body.config);
    await this.checkReceiver(principal, row.plugin, config);
    if (config !== undefined && secrets === undefined) this.requireSecretsToMove(row, config);
    try {
      return connectionView(await this.store.update(row, { name: body.name, secrets, config }));
    } catch (err) {
      // Drizzle wraps the driver's error (DrizzleQueryError): the unique violation may be its cause.
      const uniqueViolation = (e: unknown) => (e as { code?: string } | undefined)?.code === '23505' || /unique/i.test(String((e as Error | undefined)?.message));
      if (uniqueViolation(err) || uniqueViolation((err as { cause?: unknown }).cause)) {
        throw new ApiError(409, 'connection_name_taken', `a connection named "${body.name}" already exists`);
      }
      throw err;
    }
  }

  /**
   * The secrets of a connection go only to its destination: whoever points it elsewhere must
   * know them, or any member could send a secret they cannot read to a listener of their own.
   */
  private requireSecretsToMove(row: ConnectionRow, config: Record<string, unknown>) {
    const before = connectionDestination(row);
    const after = connectionDestination({ plugin: row.plugin, config });
    if (sameDestination(before, after)) return;
    const field = `config.${findPlugin(row.plugin)!.destination!.field}`;
    const message = `changing where this connection's secrets are sent requires the secrets again: send secrets in the same request`;
    throw new ApiError(400, 'secret_required', `${field}: ${message}`, [{ field, rule: 'secret_required', message }]);
  }

  async delete(principal: Principal, connectionUuid: string) {
    const row = await this.require(principal, connectionUuid);
    await this.store.delete(principal.organization_uuid, row.connectionUuid);
  }
}

/** One destination however it is spelled (case, default port, a trailing slash). */
function sameDestination(a: string | undefined, b: string | undefined): boolean {
  const normal = (url: string | undefined) => (url && URL.canParse(url) ? new URL(url).href.replace(/\/+$/, '') : url);
  return normal(a) === normal(b);
}
