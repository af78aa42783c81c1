import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { and, isNull, lt, or } from 'drizzle-orm';
import type { Database, DatabaseHandle } from '../../db/client';
import { authorizationCodes, endUserEmailTokens, loginSessions, revokedTokens, signInThrottle } from '../../db/schema';
import { CONFIG, DATABASE, LOGGER } from '../common/di';
import { loggableError } from '../common/loggable-error';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';

const SWEEP_EVERY_MS = 15 * 60_000;
/** Kept this long past their end, so nothing still in flight (a token issued from a code, say) outlives its row. */
const GRACE_MS = 24 * 3600_000;

/**
 * Deletes what the login host and the accounts keep only for a while: counters whose window and
 * lock have passed, and email links, authorization codes, revoked token ids and login sessions a
 * day past their expiry. Returns how many rows each table lost.
 */
export async function sweepExpired(db: Database, longestWindowSeconds: number, now = new Date()): Promise<Record<string, number>> {
  const graceEnd = new Date(now.getTime() - GRACE_MS);
  const windowEnd = new Date(now.getTime() - longestWindowSeconds * 1000);
  const counted = async (deleted: Promise<unknown[]>) => (await deleted).length;
  return {
    sign_in_throttle: await counted(
      db
        .delete(signInThrottle)
        .where(and(lt(signInThrottle.windowStartedAt, windowEnd), or(isNull(signInThrottle.lockedUntil), lt(signInThrottle.lockedUntil, now))))
        .returning({ key: signInThrottle.key }),
    ),
    end_user_email_tokens: await counted(
      db.delete(endUserEmailTokens).where(lt(endUserEmailTokens.expiresAt, graceEnd)).returning({ key: endUserEmailTokens.tokenHash }),
    ),
    authorization_codes: await counted(
      db.delete(authorizationCodes).where(lt(authorizationCodes.expiresAt, graceEnd)).returning({ key: authorizationCodes.codeHash }),
    ),
    revoked_tokens: await counted(db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, graceEnd)).returning({ key: revokedTokens.jti })),
    login_sessions: await counted(db.delete(loginSessions).where(lt(loginSessions.expiresAt, graceEnd)).returning({ key: loginSessions.sid })),
  };
}

/** Runs sweepExpired in each API process every 15 minutes; several processes sweeping at once only repeat deletes. */
@Injectable()
export class AccountsHousekeeping implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onModuleInit() {
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy() {
    clearInterval(this.timer);
  }

  private async sweep() {
    const { signInLockSeconds, accountLimitWindowSeconds } = this.config.accounts;
    try {
      const deleted = await sweepExpired(this.database.db, Math.max(signInLockSeconds, accountLimitWindowSeconds));
      if (Object.values(deleted).some((n) => n > 0)) this.log.info({ deleted }, 'expired account rows deleted');
    } catch (err) {
      this.log.warn({ err: loggableError(err) }, 'expired account rows not deleted; next sweep in 15 minutes');
    }
  }
}
