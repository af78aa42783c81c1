import { KeyedLimiter } from '../../src/accounts/throttle';
import { type DatabaseHandle, openDatabase } from '../../db/client';

describe('KeyedLimiter on PGlite', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openDatabase({});
    await database.migrate();
  });
  afterAll(() => database.close());

  it('takes max events a window per key, then refuses until the window has passed', async () => {
    const limiter = new KeyedLimiter(database.db, 60);
    const t0 = new Date('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    expect(await limiter.take('mail:a', 3, at(0))).toBe(true);
    expect(await limiter.take('mail:a', 3, at(1))).toBe(true);
    expect(await limiter.take('mail:b', 3, at(1))).toBe(true);
    expect(await limiter.take('mail:a', 3, at(2))).toBe(true);
    expect(await limiter.take('mail:a', 3, at(3))).toBe(false);
    expect(await limiter.retryAfter(['mail:a'], at(3))).toBe(59);
    expect(await limiter.take('mail:b', 3, at(3))).toBe(true);
    expect(await limiter.take('mail:a', 3, at(62))).toBe(true);
  });
});
