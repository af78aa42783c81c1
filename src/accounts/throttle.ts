import { createHash } from 'node:crypto';
import { and, eq, gt, sql } from 'drizzle-orm';
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

/** One event counted under a key: how many its window holds now, including this one. */
export interface Counted {
  key: string;
  events: number;
  windowStartedAt: Date;
  lockedUntil: Date | null;
}

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
      latest = Math.max(latest, secondsUntil(row?.lockedUntil, now));
    }
    return latest;
  }

  /** One atomic upsert, so concurrent events are all counted, each seeing the count it made. */
  async count(key: string, max: number, now = new Date()): Promise<Counted> {
    const [row] = await this.upsert(key, max, now);
    return { key, ...row };
  }

  /**
   * Counts one event and says whether it was within the `max` of its window: 0, or the seconds
   * until that window ends. Counting and deciding are one statement, so concurrent callers cannot
   * all pass a check made before any of them counted.
   */
  async take(key: string, max: number, now = new Date()): Promise<number> {
    const { events, windowStartedAt } = await this.count(key, max, now);
    if (events <= max) return 0;
    return Math.max(1, Math.ceil((windowStartedAt.getTime() + this.windowSeconds * 1000 - now.getTime()) / 1000));
  }

  /**
   * Takes back an event counted by `count`, if its window is still the key's: the count drops by
   * one, and so does the lock when the count falls below `max` again.
   */
  async uncount({ key, windowStartedAt }: Counted, max: number): Promise<void> {
    await this.db
      .update(signInThrottle)
      .set({
        failures: sql`${signInThrottle.failures} - 1`,
        lockedUntil: sql`CASE WHEN ${signInThrottle.failures} - 1 < ${max} THEN NULL ELSE ${signInThrottle.lockedUntil} END`,
      })
      .where(and(eq(signInThrottle.key, key), eq(signInThrottle.windowStartedAt, windowStartedAt), gt(signInThrottle.failures, 0)));
  }

  private upsert(key: string, max: number, now: Date) {
    const windowStart = new Date(now.getTime() - this.windowSeconds * 1000);
    const lockEnd = new Date(now.getTime() + this.windowSeconds * 1000);
    const stale = sql`${signInThrottle.windowStartedAt} <= ${windowStart.toISOString()}::timestamptz`;
    const events = sql`CASE WHEN ${stale} THEN 1 ELSE ${signInThrottle.failures} + 1 END`;
    // A lock in force is not moved by the events refused during it.
    const unlocked = sql`(${signInThrottle.lockedUntil} IS NULL OR ${signInThrottle.lockedUntil} <= ${now.toISOString()}::timestamptz)`;
    return this.db
      .insert(signInThrottle)
      .values({ key, failures: 1, windowStartedAt: now, lockedUntil: max <= 1 ? lockEnd : null })
      .onConflictDoUpdate({
        target: signInThrottle.key,
        set: {
          failures: events,
          windowStartedAt: sql`CASE WHEN ${stale} THEN ${now.toISOString()}::timestamptz ELSE ${signInThrottle.windowStartedAt} END`,
          lockedUntil: sql`CASE WHEN ${events} >= ${max} AND ${unlocked} THEN ${lockEnd.toISOString()}::timestamptz ELSE ${signInThrottle.lockedUntil} END`,
        },
      })
      .returning({ events: signInThrottle.failures, windowStartedAt: signInThrottle.windowStartedAt, lockedUntil: signInThrottle.lockedUntil });
  }

  async clear(key: string): Promise<void> {
    await this.db.delete(signInThrottle).where(eq(signInThrottle.key, key));
  }
}

function secondsUntil(until: Date | null | undefined, now: Date): number {
  return until && until > now ? Math.ceil((until.getTime() - now.getTime()) / 1000) : 0;
}

/**
 * A sign-in attempt (a password or a code): refused, with the seconds until the lock that refused
 * it ends, or counted as failed and to be checked, then settled if it was not a failure.
 */
export type SignInAttempt =
  | { refused: true; retryAfter: number }
  | {
      refused: false;
      /** The secret was right but the sign-in goes on (a second factor, an unverified email): not a failure. */
      passed(): Promise<void>;
      /** Signed in: not a failure, and its account's count is cleared. */
      signedIn(): Promise<void>;
    };

/**
 * Failed sign-ins counted per key in a fixed window; reaching the maximum locks the key for
 * lockSeconds. Each attempt is counted before its secret is checked and taken back once it
 * proves right: counted only after the check, every attempt of a concurrent burst would pass
 * the lock check while scrypt ran for the others, and a burst could try any number of passwords.
 */
export class SignInThrottle {
  private readonly limiter: KeyedLimiter;

  constructor(
    db: Database,
    private readonly limits: ThrottleLimits,
  ) {
    this.limiter = new KeyedLimiter(db, limits.lockSeconds);
  }

  /**
   * Counts an attempt against its account and its client address. Refused, counted nowhere, when
   * either is locked or the attempt is past either maximum; the max-th attempt locks its key
   * until it proves right.
   */
  async attempt(account: string, client: string, now = new Date()): Promise<SignInAttempt> {
    const locked = await this.limiter.retryAfter([account, client], now);
    if (locked > 0) return { refused: true, retryAfter: locked };
    const counted: Array<[Counted, number]> = [];
    const uncount = (keep: (c: Counted) => boolean = () => true) =>
      Promise.all(counted.filter(([c]) => keep(c)).map(([c, max]) => this.limiter.uncount(c, max))).then(() => undefined);
    for (const [key, max] of [
      [account, this.limits.maxFailuresPerAccount],
      [client, this.limits.maxFailuresPerClient],
    ] as const) {
      const c = await this.limiter.count(key, max, now);
      counted.push([c, max]);
      if (c.events > max) {
        await uncount();
        return { refused: true, retryAfter: Math.max(1, secondsUntil(c.lockedUntil, now)) };
      }
    }
    return {
      refused: false,
      passed: () => uncount(),
      // The account's count is cleared, this attempt with it: only the address's is taken back.
      signedIn: async () => {
        await uncount((c) => c.key !== account);
        await this.limiter.clear(account);
      },
    };
  }
}
