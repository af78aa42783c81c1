import type { Transport } from '../transport.js';
import type { Connection, ConnectionCreated, ConnectionInput, ConnectionUpdate, Plugin } from '../types.js';

/** GET /plugins: the provider families and the credential fields each holds. */
export class PluginsManager {
  constructor(private readonly transport: Transport) {}

  async list(): Promise<Plugin[]> {
    return (await this.transport.request<{ plugins: Plugin[] }>('/plugins', { idempotent: true })).body.plugins;
  }
}

/** /connections: the organization's stored credentials (secrets go in, never come back). */
export class ConnectionsManager {
  constructor(private readonly transport: Transport) {}

  async create(input: ConnectionInput): Promise<ConnectionCreated> {
    return (await this.transport.request<ConnectionCreated>('/connections', { method: 'POST', body: input, idempotent: false })).body;
  }

  async list(options: { plugin?: string } = {}): Promise<Connection[]> {
    const res = await this.transport.request<{ connections: Connection[] }>('/connections', {
      query: { plugin: options.plugin },
      idempotent: true,
    });
    return res.body.connections;
  }

  async get(connectionUuid: string): Promise<Connection> {
    return (await this.transport.request<Connection>(this.path(connectionUuid), { idempotent: true })).body;
  }

  async update(connectionUuid: string, update: ConnectionUpdate): Promise<Connection> {
    return (await this.transport.request<Connection>(this.path(connectionUuid), { method: 'PATCH', body: update, idempotent: false })).body;
  }

  async delete(connectionUuid: string): Promise<void> {
    await this.transport.request(this.path(connectionUuid), { method: 'DELETE', idempotent: true });
  }

  private path(connectionUuid: string) {
    return `/connections/${encodeURIComponent(connectionUuid)}`;
  }
}
