import { hashToken, type OrgMember } from './org-tokens';

/**
 * Tokens resolved in the last `ttlMs`, so most requests skip the database lookup. Revocation
 * is a database write this process does not see: a revoked token keeps working here for at
 * most `ttlMs`, the bound TOKEN_CACHE_TTL_MS documents. Only successful lookups are kept (an
 * unknown token always asks the database, and cannot push live tokens out), by the token's
 * hash, so the process holds no token in the clear. Least recently used entries go first.
 */
export class TokenCache {
  private readonly entries = new Map<string, { member: OrgMember; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async resolve(token: string, lookup: (token: string) => Promise<OrgMember | undefined>): Promise<OrgMember | undefined> {
    if (this.ttlMs === 0) return lookup(token);
    const key = hashToken(token);
    const hit = this.entries.get(key);
    this.entries.delete(key);
    if (hit && hit.expiresAt > this.now()) {
      this.entries.set(key, hit);
      return hit.member;
    }
    // Counted from before the lookup: the answer cannot reflect the database any earlier.
    const asked = this.now();
    const member = await lookup(token);
    if (member) {
      this.entries.set(key, { member, expiresAt: asked + this.ttlMs });
      if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return member;
  }
}
