import { KeyedLimiter } from '../../src/accounts/throttle';
import { type DatabaseHandle, openDatabase } from '../../db/client';

describe('KeyedLimiter on PGlite', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openDatabase({});
    await database.migrate();
  });
  afterAll(() => database.close());

  it('takes max events a window per key, then refuses until its window has passed', async () => {
    const limiter = new KeyedLimiter(database.db, 60);
    const t0 = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    expect(await limiter.take('mail:a', 3, at(0))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(1))).toBe(0);
    expect(await limiter.take('mail:b', 3, at(1))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(2))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(3))).toBe(57);
    expect(await limiter.take('mail:b', 3, at(3))).toBe(0);
    expect(await limiter.take('mail:a', 3, at(61))).toBe(0);
  });

  it('lets exactly max of many concurrent takes through', async () => {
    const limiter = new KeyedLimiter(database.db, 60);
    const waits = await Promise.all(Array.from({ length: 12 }, () => limiter.take('register:concurrent', 5)));
    expect(waits.filter((w) => w === 0)).toHaveLength(5);
  });
});
