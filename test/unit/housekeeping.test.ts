import { randomUUID } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client';
import { authorizationCodes, endUserEmailTokens, endUsers, identityApps, loginSessions, revokedTokens, signInThrottle } from '../../db/schema';
import { sweepExpired } from '../../src/accounts/housekeeping';
import { openMigratedPglite } from '../support/pglite';

describe('sweepExpired on PGlite', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  it('deletes counters past their window and lock, and links, codes, token ids and sessions a day past expiry; keeps the rest', async () => {
    const db = database.db;
    const now = new Date('2026-06-01T12:00:00Z');
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const HOUR = 3600_000;
    const user = randomUUID();
    await db.insert(identityApps).values({ clientUuid: 'cli_h', clientKey: 'ck_h', organizationUuid: 'org_h', name: 'h', redirectUris: ['https://a/cb'] });
    await db.insert(endUsers).values({ endUserUuid: user, organizationUuid: 'org_h', clientUuid: 'cli_h', email: 'h@example.com', passwordHash: 'x' });
    await db.insert(signInThrottle).values([
      { key: 'stale', failures: 3, windowStartedAt: ago(2 * HOUR), lockedUntil: null },
      { key: 'stale-but-locked', failures: 9, windowStartedAt: ago(2 * HOUR), lockedUntil: new Date(now.getTime() + 60_000) },
      { key: 'in-window', failures: 1, windowStartedAt: ago(60_000), lockedUntil: null },
    ]);
    const link = (hash: string, expiresAt: Date) => ({ tokenHash: hash, endUserUuid: user, purpose: 'verify_email' as const, expiresAt });
    await db.insert(endUserEmailTokens).values([link('old-link', ago(25 * HOUR)), link('recent-link', ago(HOUR))]);
    const code = (hash: string, expiresAt: Date) => ({ codeHash: hash, clientUuid: 'cli_h', redirectUri: 'https://a/cb', codeChallenge: 'c', sid: 's', endUserUuid: user, expiresAt });
    await db.insert(authorizationCodes).values([code('old-code', ago(25 * HOUR)), code('recent-code', ago(HOUR))]);
    await db.insert(revokedTokens).values([
      { jti: 'old-jti', expiresAt: ago(25 * HOUR) },
      { jti: 'recent-jti', expiresAt: ago(HOUR) },
    ]);
    const session = (sid: string, expiresAt: Date) => ({ sid, endUserUuid: user, clientUuid: 'cli_h', organizationUuid: 'org_h', expiresAt });
    await db.insert(loginSessions).values([session('old-sid', ago(25 * HOUR)), session('live-sid', new Date(now.getTime() + HOUR))]);

    expect(await sweepExpired(db, 3600, now)).toEqual({
      sign_in_throttle: 1,
      end_user_email_tokens: 1,
      authorization_codes: 1,
      revoked_tokens: 1,
      login_sessions: 1,
    });
    const keys = (await db.select().from(signInThrottle).where(inArray(signInThrottle.key, ['stale', 'stale-but-locked', 'in-window']))).map((r) => r.key);
    expect(keys.sort()).toEqual(['in-window', 'stale-but-locked']);
    expect((await db.select().from(endUserEmailTokens)).map((r) => r.tokenHash)).toEqual(['recent-link']);
    expect((await db.select().from(authorizationCodes)).map((r) => r.codeHash)).toEqual(['recent-code']);
    expect((await db.select().from(revokedTokens)).map((r) => r.jti)).toEqual(['recent-jti']);
    expect((await db.select().from(loginSessions)).map((r) => r.sid)).toEqual(['live-sid']);
  });
});
