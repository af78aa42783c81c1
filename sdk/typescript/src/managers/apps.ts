import type { Transport } from '../transport.js';
import type { App } from '../types.js';

/** GET /apps: the organization's end-user sign-in apps (provisioned by identity.app.provision runs). */
export class AppsManager {
  constructor(private readonly transport: Transport) {}

  async list(): Promise<App[]> {
    return (await this.transport.request<{ apps: App[] }>('/apps', { idempotent: true })).body.apps;
  }

  /**
   * Turns TOTP off for an end user of one of the organization's apps, who then signs in with the
   * password alone: the way back from a lost phone or a secret someone else enrolled.
   * NotFoundError for an app or end user the organization does not have.
   */
  async clearEndUserTotp(clientUuid: string, endUserUuid: string): Promise<void> {
    const path = `/apps/${encodeURIComponent(clientUuid)}/end-users/${encodeURIComponent(endUserUuid)}/mfa/totp`;
    await this.transport.request(path, { method: 'DELETE', idempotent: true });
  }
}
