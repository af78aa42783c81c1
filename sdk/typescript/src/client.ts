import { AppsManager } from './managers/apps.js';
import { CatalogManager } from './managers/catalog.js';
import { CompositionsManager } from './managers/compositions.js';
import { ConnectionsManager, PluginsManager } from './managers/connections.js';
import { EntitlementsManager } from './managers/entitlements.js';
import { HooksManager } from './managers/hooks.js';
import { SchedulesManager } from './managers/schedules.js';
import { WorkflowsManager } from './managers/workflows.js';
import { type ClientOptions, Transport } from './transport.js';
import type { Me } from './types.js';

/**
 * The Workflow Engine API: one manager per resource, one method per route.
 *
 *     const engine = new WorkflowEngine({ baseUrl: 'http://127.0.0.1:3000', token: process.env.WFE_TOKEN! });
 *     const run = await engine.workflows.start('esign.resources.get-resource-information', { base_url });
 *     const output = await run.wait();
 */
export class WorkflowEngine {
  readonly catalog: CatalogManager;
  readonly workflows: WorkflowsManager;
  readonly plugins: PluginsManager;
  readonly connections: ConnectionsManager;
  readonly schedules: SchedulesManager;
  readonly hooks: HooksManager;
  readonly compositions: CompositionsManager;
  readonly entitlements: EntitlementsManager;
  readonly apps: AppsManager;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.catalog = new CatalogManager(this.transport);
    this.workflows = new WorkflowsManager(this.transport);
    this.plugins = new PluginsManager(this.transport);
    this.connections = new ConnectionsManager(this.transport);
    this.schedules = new SchedulesManager(this.transport);
    this.hooks = new HooksManager(this.transport);
    this.compositions = new CompositionsManager(this.transport);
    this.entitlements = new EntitlementsManager(this.transport);
    this.apps = new AppsManager(this.transport);
  }

  /** Who the token is (GET /auth/me). */
  async me(): Promise<Me> {
    return (await this.transport.request<Me>('/auth/me', { idempotent: true })).body;
  }
}
