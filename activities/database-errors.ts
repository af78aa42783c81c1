/** The SQLSTATE of a database error, which Drizzle may have wrapped as its cause. */
export function sqlState(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * The database refused the data itself: class 22 (data exception: invalid JSON, an untranslatable
 * character, a value out of range) or 54 (program limit exceeded: JSON nested past the stack).
 * The same write fails the same way every time, unlike a lost connection or a time-out.
 */
export function isRefusedData(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('54'));
}
