import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { signInThrottle } from '../../db/schema';

export interface ThrottleLimits {
  maxFailuresPerAccount: number;
  maxFailuresPerClient: number;
  lockSeconds: number;
}

const emailDigest = (email: string) => createHash('sha256').update(email).digest('base64url');

/**
 * The account key is the app and the email typed, not the end user's uuid: an address nobody
 * registered is locked exactly like one that exists, so the lock tells nothing about registration.
 */
export const accountKey = (clientUuid: string, email: string) => `account:${clientUuid}:${emailDigest(email)}`;
export const clientKey = (address: string) => `client:${address}`;
/** Account mail (verification and reset links) sent to one address of one app. */
export const mailKey = (clientUuid: string, email: string) => `mail:${clientUuid}:${emailDigest(email)}`;
/** Registrations tried from one client address. */
export const registrationKey = (address: string) => `register:${address}`;

/** Events counted per key in a fixed window of `windowSeconds`; the max-th locks the key for as long. */
export class KeyedLimiter {
  constructor(
    private readonly db: Database,
    private readonly windowSeconds: number,
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

  /** One atomic upsert, so concurrent events are all counted. */
  async count(key: string, max: number, now = new Date()): Promise<void> {
    await this.upsert(key, max, now);
  }

  /**
   * Counts one event and says whether it was within the `max` of its window: 0, or the seconds
   * until that window ends. Counting and deciding are one statement, so concurrent callers cannot
   * all pass a check made before any of them counted.
   */
  async take(key: string, max: number, now = new Date()): Promise<number> {
    const [row] = await this.upsert(key, max, now);
    if (row.events <= max) return 0;
    return Math.max(1, Math.ceil((row.windowStartedAt.getTime() + this.windowSeconds * 1000 - now.getTime()) / 1000));
  }

  private upsert(key: string, max: number, now: Date) {
    const windowStart = new Date(now.getTime() - this.windowSeconds * 1000);
    const lockEnd = new Date(now.getTime() + this.windowSeconds * 1000);
    const stale = sql`${signInThrottle.windowStartedAt} <= ${windowStart.toISOString()}::timestamptz`;
    const events = sql`CASE WHEN ${stale} THEN 1 ELSE ${signInThrottle.failures} + 1 END`;
    return this.db
      .insert(signInThrottle)
      .values({ key, failures: 1, windowStartedAt: now, lockedUntil: max <= 1 ? lockEnd : null })
      .onConflictDoUpdate({
        target: signInThrottle.key,
        set: {
          failures: events,
          windowStartedAt: sql`CASE WHEN ${stale} THEN ${now.toISOString()}::timestamptz ELSE ${signInThrottle.windowStartedAt} END`,
          lockedUntil: sql`CASE WHEN ${events} >= ${max} THEN ${lockEnd.toISOString()}::timestamptz ELSE ${signInThrottle.lockedUntil} END`,
        },
      })
      .returning({ events: signInThrottle.failures, windowStartedAt: signInThrottle.windowStartedAt });
  }

  async clear(key: string): Promise<void> {
    await this.db.delete(signInThrottle).where(eq(signInThrottle.key, key));
  }
}

/** Failed sign-ins counted per key in a fixed window; reaching the maximum locks the key for lockSeconds. */
export class SignInThrottle {
  private readonly limiter: KeyedLimiter;

  constructor(
    db: Database,
    private readonly limits: ThrottleLimits,
  ) {
    this.limiter = new KeyedLimiter(db, limits.lockSeconds);
  }

  /** Seconds until the latest lock among these keys ends; 0 when none is locked. */
  retryAfter(keys: string[], now = new Date()): Promise<number> {
    return this.limiter.retryAfter(keys, now);
  }

  async recordFailure(account: string, client: string, now = new Date()): Promise<void> {
    await this.limiter.count(account, this.limits.maxFailuresPerAccount, now);
    await this.limiter.count(client, this.limits.maxFailuresPerClient, now);
  }

  /** A successful sign-in clears its account's count; the address's stays, so one good account cannot reset it. */
  recordSuccess(account: string): Promise<void> {
    return this.limiter.clear(account);
  }
}
