import type { DatabaseHandle } from '../../db/client';
import { DatabaseCheck } from '../../src/runs/database-check';

describe('DatabaseCheck (what a start asks before it reaches Temporal)', () => {
  const handle = (kind: DatabaseHandle['kind'], ping: () => Promise<void>) => ({ kind, ping: jest.fn(ping) }) as unknown as DatabaseHandle & { ping: jest.Mock };

  it('pings Postgres once for the starts that ask while a ping is out, and again for a later one', async () => {
    let answer!: () => void;
    const database = handle('postgres', () => new Promise<void>((resolve) => (answer = resolve)));
    const check = new DatabaseCheck(database);
    const first = check.ask();
    const second = check.ask();
    expect(database.ping).toHaveBeenCalledTimes(1);
    answer();
    expect(await Promise.all([first, second])).toEqual([undefined, undefined]);
    void check.ask();
    expect(database.ping).toHaveBeenCalledTimes(2);
  });

  it("answers with the ping's error instead of throwing it", async () => {
    const gone = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const check = new DatabaseCheck(handle('postgres', () => Promise.reject(gone)));
    expect(await check.ask()).toBe(gone);
  });

  it('hands a request the check begun as it arrived, and asks anew for one that began none', async () => {
    const database = handle('postgres', () => Promise.resolve());
    const check = new DatabaseCheck(database);
    const req = {};
    check.beginFor(req);
    await check.forRequest(req);
    expect(database.ping).toHaveBeenCalledTimes(1);
    await check.forRequest({});
    expect(database.ping).toHaveBeenCalledTimes(2);
  });

  it('does not ask PGlite, which runs in this process', async () => {
    const database = handle('pglite', () => Promise.reject(new Error('must not be asked')));
    expect(await new DatabaseCheck(database).ask()).toBeUndefined();
    expect(database.ping).not.toHaveBeenCalled();
  });
});
