/** With the cache off every check is a database query: one a second per open stream at most. */
export const RECHECK_FLOOR_MS = 1_000;

/** What watching needs of a resolver: when its answer for a live token expires. */
export interface TokenLookup {
  resolve(token: string): Promise<{ expiresAt: number } | undefined>;
}

/**
 * For responses that outlive a request (streams): re-resolves `token` whenever the cache's answer
 * for it expires, so `onRevoked` comes within TOKEN_CACHE_TTL_MS (at least RECHECK_FLOOR_MS) of a
 * revocation, the bound a new request has. A lookup that fails (the database away) is not a
 * revocation: it is tried again. Returns the function that stops watching.
 */
export function watchToken(tokens: TokenLookup, token: string, onRevoked: () => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const scheduleAt = (at: number) => {
    if (stopped) return;
    timer = setTimeout(() => void check(), Math.max(at - Date.now(), RECHECK_FLOOR_MS));
    timer.unref();
  };
  const check = async () => {
    let resolved: Awaited<ReturnType<TokenLookup['resolve']>>;
    try {
      resolved = await tokens.resolve(token);
    } catch {
      return scheduleAt(0);
    }
    if (stopped) return;
    if (resolved) return scheduleAt(resolved.expiresAt);
    stopped = true;
    onRevoked();
  };
  void check();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
