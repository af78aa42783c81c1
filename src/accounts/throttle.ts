import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { signInThrottle } from '../../db/schema';

export interface ThrottleLimits {
  maxFailuresPerAccount: number;
  maxFailuresPerClient: number;
  lockSeconds: number;
}

/**
 * The account key is the app and the email typed, not the end user's uuid: an address nobody
 * registered is locked exactly like one that exists, so the lock tells nothing about registration.
 */
export const accountKey = (clientUuid: string, email: string) =>
  `account:${clientUuid}:${createHash('sha256').update(email).digest('base64url')}`;
export const clientKey = (address: string) => `client:${address}`;

/** Failed sign-ins counted per key in a fixed window; reaching the maximum locks the key for lockSeconds. */
export class SignInThrottle {
  constructor(
    private readonly db: Database,
    private readonly limits: ThrottleLimits,
  ) {}

  /** Seconds until the latest lock among these keys ends; 0 when none is locked. */
  async retryAfter(keys: string[], now = new Date()): Promise<number> {
    let latest = 0;
    for (const key of keys) {
      const [row] = await this.db.select({ lockedUntil: signInThrottle.lockedUntil }).from(signInThrottle).where(eq(signInThrottle.key, key));
      if (row?.lockedUntil && row.lockedUntil > now) latest = Math.max(latest, Math.ceil((row.lockedUntil.getTime() - now.getTime()) / 1000));
    }
    return latest;
  }

  /** One atomic upsert per key, so concurrent failures are all counted. */
  async recordFailure(account: string, client: string, now = new Date()): Promise<void> {
    await this.count(account, this.limits.maxFailuresPerAccount, now);
    await this.count(client, this.limits.maxFailuresPerClient, now);
  }

  /** A successful sign-in clears its account's count; the address's stays, so one good account cannot reset it. */
  async recordSuccess(account: string): Promise<void> {
    await this.db.delete(signInThrottle).where(eq(signInThrottle.key, account));
  }

  private async count(key: string, max: number, now: Date): Promise<void> {
    const windowStart = new Date(now.getTime() - this.limits.lockSeconds * 1000);
    const lockEnd = new Date(now.getTime() + this.limits.lockSeconds * 1000);
    const stale = sql`${signInThrottle.windowStartedAt} <= ${windowStart.toISOString()}::timestamptz`;
    const failures = sql`CASE WHEN ${stale} THEN 1 ELSE ${signInThrottle.failures} + 1 END`;
    await this.db
      .insert(signInThrottle)
      .values({ key, failures: 1, windowStartedAt: now, lockedUntil: max <= 1 ? lockEnd : null })
      .onConflictDoUpdate({
        target: signInThrottle.key,
        set: {
          failures,
          windowStartedAt: sql`CASE WHEN ${stale} THEN ${now.toISOString()}::timestamptz ELSE ${signInThrottle.windowStartedAt} END`,
          lockedUntil: sql`CASE WHEN ${failures} >= ${max} THEN ${lockEnd.toISOString()}::timestamptz ELSE ${signInThrottle.lockedUntil} END`,
        },
      });
  }
}
