import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { SecretBox } from '../../activities/secret-box';
import type { Database } from '../../db/client';
import { endUsers, identityApps } from '../../db/schema';
import { verifyPassword } from './passwords';
import { accountKey, clientKey, type SignInThrottle } from './throttle';
import { newTotpSecret, otpauthUri, totpStep } from './totp';

type EndUser = typeof endUsers.$inferSelect;

export interface TotpSetup {
  secret: string;
  otpauth_uri: string;
}

/** Refused by the sign-in throttle, unchecked: seconds until its lock ends. */
export interface Locked {
  retryAfter: number;
}

export const isLocked = (result: unknown): result is Locked => typeof result === 'object' && result !== null && 'retryAfter' in result;

/**
 * An end user's TOTP: a secret sealed at rest (AES-GCM bound to the end user), unconfirmed until a
 * current code proves the app holds it, and codes each accepted once. Every code checked here
 * counts under the sign-in throttle's keys for the account and the client address, as sign-in's
 * codes do: a million codes are as many guesses through these routes as through the sign-in form.
 */
export class TotpEnrolment {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    private readonly throttle: SignInThrottle,
  ) {}

  /**
   * A new, unconfirmed secret (replacing an unconfirmed one), for the account's current password:
   * a stolen session or end-user token alone must not put a secret of the thief's on the account
   * and lock its owner out. 'enrolled' when TOTP is already on.
   */
  async start(user: EndUser, password: string, address: string): Promise<TotpSetup | 'enrolled' | 'wrong_password' | Locked> {
    if (user.totpConfirmedAt) return 'enrolled';
    const right = await this.throttled(user, address, () => verifyPassword(password, user.passwordHash));
    if (right !== true) return right || 'wrong_password';
    const secret = newTotpSecret();
    const sealed = this.box.seal(Buffer.from(secret), Buffer.from(user.endUserUuid)).toString('base64');
    await this.db.update(endUsers).set({ totpSecret: sealed, totpConfirmedAt: null }).where(eq(endUsers.endUserUuid, user.endUserUuid));
    return this.setup(user, secret);
  }

  /** 'none' when no enrolment was started, 'invalid' for a wrong code. */
  async confirm(user: EndUser, code: unknown, address: string): Promise<'enabled' | 'none' | 'invalid' | Locked> {
    if (!user.totpSecret) return 'none';
    const right = await this.throttled(user, address, () => this.accept(user, code));
    if (right !== true) return right || 'invalid';
    await this.db.update(endUsers).set({ totpConfirmedAt: new Date() }).where(eq(endUsers.endUserUuid, user.endUserUuid));
    return 'enabled';
  }

  /**
   * TOTP that is on comes off only with a current code: a stolen session or end-user token alone
   * cannot weaken the account's sign-in. An unconfirmed enrolment is dropped without one.
   */
  async remove(user: EndUser, code: unknown, address: string): Promise<'removed' | 'invalid' | Locked> {
    if (user.totpConfirmedAt) {
      const right = await this.throttled(user, address, () => this.accept(user, code));
      if (right !== true) return right || 'invalid';
    }
    await this.db.update(endUsers).set({ totpSecret: null, totpConfirmedAt: null }).where(eq(endUsers.endUserUuid, user.endUserUuid));
    return 'removed';
  }

  /**
   * One check of a secret of this account, counted as a failed sign-in before it runs (so a
   * concurrent burst gets at most the maximum checked) and taken back when it proves right; a
   * success does not clear the account's count, since this proves no sign-in.
   */
  private async throttled(user: EndUser, address: string, check: () => Promise<boolean>): Promise<boolean | Locked> {
    const attempt = await this.throttle.attempt(accountKey(user.clientUuid, user.email), clientKey(address));
    if (attempt.refused) return { retryAfter: attempt.retryAfter };
    if (!(await check())) return false;
    await attempt.passed();
    return true;
  }

  /**
   * A current code of the user's secret, accepted once: recording its time step only if it is later
   * than the last accepted one (atomically) refuses a replayed or an older code (RFC 6238 §5.2).
   */
  async accept(user: EndUser, code: unknown): Promise<boolean> {
    if (!user.totpSecret) return false;
    const step = totpStep(this.secretOf(user), code);
    if (step === undefined) return false;
    const accepted = await this.db
      .update(endUsers)
      .set({ totpLastStep: step })
      .where(and(eq(endUsers.endUserUuid, user.endUserUuid), or(isNull(endUsers.totpLastStep), lt(endUsers.totpLastStep, step))))
      .returning({ endUserUuid: endUsers.endUserUuid });
    return accepted.length === 1;
  }

  /**
   * An org member's way back for an end user of theirs who cannot give a code (a lost phone, or a
   * secret someone else enrolled): TOTP off. False when the organization has no such end user in that app.
   */
  async clear(ids: { organization_uuid: string; client_uuid: string; end_user_uuid: string }): Promise<boolean> {
    const cleared = await this.db
      .update(endUsers)
      .set({ totpSecret: null, totpConfirmedAt: null })
      .where(
        and(
          eq(endUsers.endUserUuid, ids.end_user_uuid),
          eq(endUsers.clientUuid, ids.client_uuid),
          eq(endUsers.organizationUuid, ids.organization_uuid),
        ),
      )
      .returning({ endUserUuid: endUsers.endUserUuid });
    return cleared.length === 1;
  }

  private secretOf(user: EndUser): string {
    return this.box.open(Buffer.from(user.totpSecret!, 'base64'), Buffer.from(user.endUserUuid)).toString();
  }

  /** The app's name is the issuer an authenticator app shows beside the code. */
  private async setup(user: EndUser, secret: string): Promise<TotpSetup> {
    const [app] = await this.db.select({ name: identityApps.name }).from(identityApps).where(eq(identityApps.clientUuid, user.clientUuid));
    return { secret, otpauth_uri: otpauthUri(secret, app?.name ?? 'Workflow Engine', user.email) };
  }
}
