import { hashToken, type OrgMember } from './org-tokens';

/** A resolved token and the moment this process stops trusting that answer. */
export interface Resolved {
  member: OrgMember;
  expiresAt: number;
}

/**
 * Tokens resolved in the last `ttlMs`, so most requests skip the database lookup. Revocation
 * is a database write this process does not see: a revoked token keeps working here for at
 * most `ttlMs`, the bound TOKEN_CACHE_TTL_MS documents. Only successful lookups are kept (an
 * unknown token always asks the database, and cannot push live tokens out), by the token's
 * hash, so the process holds no token in the clear. Least recently used entries go first.
 */
export class TokenCache {
  private readonly entries = new Map<string, Resolved>();
  /** Lookups in flight: open streams of one token re-check together when its entry expires. */
  private readonly pending = new Map<string, Promise<Resolved | undefined>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async resolve(token: string, lookup: (token: string) => Promise<OrgMember | undefined>): Promise<OrgMember | undefined> {
    return (await this.resolveUntil(token, lookup))?.member;
  }

  /** Like `resolve`, with when the answer expires (now, with the cache disabled). */
  async resolveUntil(token: string, lookup: (token: string) => Promise<OrgMember | undefined>): Promise<Resolved | undefined> {
    if (this.ttlMs === 0) {
      const asked = this.now();
      const member = await lookup(token);
      return member && { member, expiresAt: asked };
    }
    const key = hashToken(token);
    const hit = this.entries.get(key);
    this.entries.delete(key);
    if (hit && hit.expiresAt > this.now()) {
      this.entries.set(key, hit);
      return hit;
    }
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const asking = this.ask(key, token, lookup).finally(() => this.pending.delete(key));
    this.pending.set(key, asking);
    return asking;
  }

  private async ask(key: string, token: string, lookup: (token: string) => Promise<OrgMember | undefined>) {
    // Counted from before the lookup: the answer cannot reflect the database any earlier.
    const asked = this.now();
    const member = await lookup(token);
    if (!member) return undefined;
    const entry = { member, expiresAt: asked + this.ttlMs };
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }
}
