import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { endUserEmailTokens } from '../../db/schema';

export type EmailTokenPurpose = 'verify_email' | 'password_reset';

/** A verification link lasts a day; a reset link, which grants the account, an hour. */
const TTL_MS: Record<EmailTokenPurpose, number> = { verify_email: 24 * 3600_000, password_reset: 3600_000 };

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

/** Single-use email link tokens (256 bits), stored only as their sha256. */
export class EmailTokens {
  constructor(private readonly db: Database) {}

  async issue(endUserUuid: string, purpose: EmailTokenPurpose): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.db.insert(endUserEmailTokens).values({
      tokenHash: hashOf(token),
      endUserUuid,
      purpose,
      expiresAt: new Date(Date.now() + TTL_MS[purpose]),
    });
    return token;
  }

  /** Marks the token used and names its end user; undefined when unknown, used, expired or for another purpose. */
  async consume(token: unknown, purpose: EmailTokenPurpose): Promise<string | undefined> {
    if (typeof token !== 'string' || token.length > 100) return undefined;
    const [row] = await this.db
      .update(endUserEmailTokens)
      .set({ usedAt: new Date() })
      .where(
        and(
          eq(endUserEmailTokens.tokenHash, hashOf(token)),
          eq(endUserEmailTokens.purpose, purpose),
          isNull(endUserEmailTokens.usedAt),
          gt(endUserEmailTokens.expiresAt, new Date()),
        ),
      )
      .returning({ endUserUuid: endUserEmailTokens.endUserUuid });
    return row?.endUserUuid;
  }

  /** Makes every other outstanding token of that purpose useless (after a reset, the older links). */
  async revokeAll(endUserUuid: string, purpose: EmailTokenPurpose): Promise<void> {
    await this.db
      .update(endUserEmailTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(endUserEmailTokens.endUserUuid, endUserUuid), eq(endUserEmailTokens.purpose, purpose), isNull(endUserEmailTokens.usedAt)));
  }
}
