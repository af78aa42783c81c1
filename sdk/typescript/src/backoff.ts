/** Exponential with jitter: about 0.5 s, 1 s, 2 s … capped at 8 s. */
export function backoffMs(attempt: number, random = Math.random): number {
  return Math.round(Math.min(8_000, 500 * 2 ** attempt) * (0.5 + random() / 2));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
