import type { OrgMember } from '../../src/auth/org-tokens';
import type { Resolved } from '../../src/auth/token-cache';
import { RECHECK_FLOOR_MS, watchToken } from '../../src/auth/token-watch';

const member: OrgMember = { token_id: 'tok_1', organization_uuid: 'org_1', username: 'bot' };

/** A resolver whose answers the test decides, counting the checks. */
function resolver(answer: () => Promise<Resolved | undefined>) {
  const calls: number[] = [];
  return {
    calls,
    resolve: (_token: string) => {
      calls.push(Date.now());
      return answer();
    },
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('watchToken', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('re-checks when the cached answer expires and reports a revocation once', async () => {
    let revoked = false;
    const tokens = resolver(async () => (revoked ? undefined : { member, expiresAt: Date.now() + 5_000 }));
    const onRevoked = jest.fn();
    watchToken(tokens, 'wes_x', onRevoked);
    await flush();
    expect(tokens.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(tokens.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(tokens.calls).toHaveLength(2);
    revoked = true;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(onRevoked).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(tokens.calls).toHaveLength(3);
    expect(onRevoked).toHaveBeenCalledTimes(1);
  });

  it('with the cache off (an answer expiring at once) checks every RECHECK_FLOOR_MS, not in a loop', async () => {
    const tokens = resolver(async () => ({ member, expiresAt: Date.now() }));
    watchToken(tokens, 'wes_x', jest.fn());
    await jest.advanceTimersByTimeAsync(10 * RECHECK_FLOOR_MS);
    expect(tokens.calls).toHaveLength(11);
  });

  it('a failed lookup is not a revocation: it is tried again', async () => {
    let failing = true;
    const tokens = resolver(async () => {
      if (failing) throw new Error('database unavailable');
      return undefined;
    });
    const onRevoked = jest.fn();
    watchToken(tokens, 'wes_x', onRevoked);
    await jest.advanceTimersByTimeAsync(3 * RECHECK_FLOOR_MS);
    expect(onRevoked).not.toHaveBeenCalled();
    expect(tokens.calls.length).toBeGreaterThanOrEqual(3);
    failing = false;
    await jest.advanceTimersByTimeAsync(RECHECK_FLOOR_MS);
    expect(onRevoked).toHaveBeenCalledTimes(1);
  });

  it('stops checking once stopped (the stream closed)', async () => {
    const tokens = resolver(async () => ({ member, expiresAt: Date.now() + 2_000 }));
    const stop = watchToken(tokens, 'wes_x', jest.fn());
    await flush();
    stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(tokens.calls).toHaveLength(1);
  });
});
