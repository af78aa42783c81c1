import type { DatabaseHandle } from '../../db/client';
import { createOrganization, createToken, type OrgMember, resolveToken, revokeToken } from '../../src/auth/org-tokens';
import { TokenCache } from '../../src/auth/token-cache';
import { openMigratedPglite } from '../support/pglite';

describe('token cache (PGlite)', () => {
  let database: DatabaseHandle;
  let organization: string;
  let clock: number;
  let lookups: number;
  const lookup = async (token: string) => {
    lookups++;
    return resolveToken(database.db, token);
  };

  beforeAll(async () => {
    database = await openMigratedPglite();
    organization = (await createOrganization(database.db, 'cache')).organization_uuid;
  });
  afterAll(() => database.close());
  beforeEach(() => {
    clock = 1_000_000;
    lookups = 0;
  });

  it('answers from memory within the TTL, and a revoked token stops working once it has passed', async () => {
    const cache = new TokenCache(5_000, () => clock);
    const { token, token_id } = await createToken(database.db, organization, 'bot');
    expect(await cache.resolve(token, lookup)).toEqual({ token_id, organization_uuid: organization, username: 'bot' });
    await revokeToken(database.db, token_id);

    clock += 4_999;
    expect(await cache.resolve(token, lookup)).toMatchObject({ token_id });
    expect(lookups).toBe(1);
    clock += 1;
    expect(await cache.resolve(token, lookup)).toBeUndefined();
    expect(lookups).toBe(2);
  });

  it('counts the TTL from before the lookup, so a slow lookup does not stretch it', async () => {
    const cache = new TokenCache(5_000, () => clock);
    const slow = async (token: string) => {
      const member = await lookup(token);
      clock += 3_000;
      return member;
    };
    const { token } = await createToken(database.db, organization, 'slow');
    await cache.resolve(token, slow);
    clock += 2_000;
    await cache.resolve(token, lookup);
    expect(lookups).toBe(2);
  });

  it('never keeps an unknown token: each attempt asks the database', async () => {
    const cache = new TokenCache(5_000, () => clock);
    const unknown = 'wes_' + 'x'.repeat(43);
    expect(await cache.resolve(unknown, lookup)).toBeUndefined();
    expect(await cache.resolve(unknown, lookup)).toBeUndefined();
    expect(lookups).toBe(2);
  });

  it('TTL 0 asks the database every time: revocation is immediate', async () => {
    const cache = new TokenCache(0, () => clock);
    const { token, token_id } = await createToken(database.db, organization, 'uncached');
    expect(await cache.resolve(token, lookup)).toBeDefined();
    await revokeToken(database.db, token_id);
    expect(await cache.resolve(token, lookup)).toBeUndefined();
    expect(lookups).toBe(2);
  });

  it('holds at most its size, dropping the least recently used token', async () => {
    const cache = new TokenCache(5_000, () => clock, 2);
    const member = (name: string): OrgMember => ({ token_id: `tok_${name}`, organization_uuid: organization, username: name });
    const fake = async (token: string) => {
      lookups++;
      return member(token);
    };
    await cache.resolve('a', fake);
    await cache.resolve('b', fake);
    await cache.resolve('a', fake); // a is now the most recently used
    await cache.resolve('c', fake); // drops b
    expect(lookups).toBe(3);
    expect(await cache.resolve('a', fake)).toEqual(member('a'));
    expect(lookups).toBe(3);
    await cache.resolve('b', fake);
    expect(lookups).toBe(4);
  });

  it('tells when its answer expires, so an open stream re-checks then', async () => {
    const cache = new TokenCache(5_000, () => clock);
    const { token, token_id } = await createToken(database.db, organization, 'watched');
    expect(await cache.resolveUntil(token, lookup)).toEqual({ member: expect.objectContaining({ token_id }), expiresAt: clock + 5_000 });
    clock += 1_000;
    expect((await cache.resolveUntil(token, lookup))?.expiresAt).toBe(clock + 4_000);
    expect((await new TokenCache(0, () => clock).resolveUntil(token, lookup))?.expiresAt).toBe(clock);
  });

  it('asks the database once for concurrent resolutions of one expired token (many streams re-checking together)', async () => {
    const cache = new TokenCache(5_000, () => clock);
    const { token, token_id } = await createToken(database.db, organization, 'together');
    const answers = await Promise.all(Array.from({ length: 50 }, () => cache.resolve(token, lookup)));
    expect(answers.every((a) => a?.token_id === token_id)).toBe(true);
    expect(lookups).toBe(1);
    await revokeToken(database.db, token_id);
    clock += 5_000;
    expect(await Promise.all(Array.from({ length: 50 }, () => cache.resolve(token, lookup)))).toEqual(Array(50).fill(undefined));
    expect(lookups).toBe(2);
  });
});
