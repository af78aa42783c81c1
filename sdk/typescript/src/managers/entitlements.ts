import { walkable } from '../paging.js';
import type { Transport } from '../transport.js';
import type { Entitlement, EntitlementFilters, EntitlementPage } from '../types.js';

/** A page of entitlements that is also an async iterator over every entitlement of every later page. */
export interface EntitlementList extends EntitlementPage, AsyncIterable<Entitlement> {}

/** GET /entitlements: what the organization's payments chains granted. */
export class EntitlementsManager {
  constructor(private readonly transport: Transport) {}

  /** One page (newest first); `for await (const e of await list(…))` walks every page. */
  async list(filters: EntitlementFilters = {}): Promise<EntitlementList> {
    const first = await this.page(filters);
    return walkable(first, (p) => p.entitlements, (cursor) => this.page({ ...filters, cursor }));
  }

  private async page(filters: EntitlementFilters): Promise<EntitlementPage> {
    return (await this.transport.request<EntitlementPage>('/entitlements', { query: { ...filters }, idempotent: true })).body;
  }
}
