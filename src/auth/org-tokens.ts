import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { apiTokens, organizations } from '../../db/schema';
import { ORGANIZATION_PREFIX } from '../../workflows/constants';

/**
 * Organizations and their org-member tokens. A token is shown once, when it is
 * created; only its sha256 is stored.
 */
const TOKEN_PREFIX = 'wes_';

export interface OrgMember {
  token_id: string;
  organization_uuid: string;
  username: string;
}

export interface IssuedToken {
  token_id: string;
  organization_uuid: string;
  token: string;
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createOrganization(db: Database, name: string): Promise<IssuedToken & { name: string }> {
  const organizationUuid = ORGANIZATION_PREFIX + randomBytes(12).toString('hex');
  await db.insert(organizations).values({ organizationUuid, name });
  const issued = await createToken(db, organizationUuid, `${name}-admin`);
  return { ...issued, name };
}

export async function createToken(db: Database, organizationUuid: string, username: string): Promise<IssuedToken> {
  const org = await db.select().from(organizations).where(eq(organizations.organizationUuid, organizationUuid));
  if (!org.length) throw new Error(`organization ${organizationUuid} does not exist`);
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const tokenId = 'tok_' + randomBytes(8).toString('hex');
  await db.insert(apiTokens).values({ tokenId, organizationUuid, tokenHash: hashToken(token), username });
  return { token_id: tokenId, organization_uuid: organizationUuid, token };
}

/** Revokes by token id or by the token itself; returns whether a live token was revoked. */
export async function revokeToken(db: Database, tokenOrId: string): Promise<boolean> {
  const match = tokenOrId.startsWith(TOKEN_PREFIX)
    ? eq(apiTokens.tokenHash, hashToken(tokenOrId))
    : eq(apiTokens.tokenId, tokenOrId);
  const revoked = await db
    .update(apiTokens)
    .set({ revokedAt: new Date() })
    .where(and(match, isNull(apiTokens.revokedAt)))
    .returning({ tokenId: apiTokens.tokenId });
  return revoked.length > 0;
}

export async function resolveToken(db: Database, token: string): Promise<OrgMember | undefined> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return undefined;
  const rows = await db
    .select({ tokenId: apiTokens.tokenId, organizationUuid: apiTokens.organizationUuid, username: apiTokens.username })
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, hashToken(token)), isNull(apiTokens.revokedAt)));
  const row = rows[0];
  return row && { token_id: row.tokenId, organization_uuid: row.organizationUuid, username: row.username };
}
