import type { Transport } from '../transport.js';
import type { App } from '../types.js';

/** GET /apps: the organization's end-user sign-in apps (provisioned by identity.app.provision runs). */
export class AppsManager {
  constructor(private readonly transport: Transport) {}

  async list(): Promise<App[]> {
    return (await this.transport.request<{ apps: App[] }>('/apps', { idempotent: true })).body.apps;
  }
}
