/**
 * Postgres text and jsonb refuse the NUL character (U+0000), so it must never reach the
 * projection: the API and the runtime refuse input carrying one, and the projection replaces
 * any that a provider's answer brings in (see withoutNul).
 */
const NUL = '\u0000';

/** A field path as text, with any NUL in a key written as the escape `\u0000`. */
function render(path: string[]): string {
  return path.map((key) => key.split(NUL).join('\\u0000')).join('.');
}

/** The path of the first key or string value that holds a NUL, or undefined. */
export function findNul(value: unknown, prefix: string[] = []): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? render(prefix) || '(value)' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const path = [...prefix, key];
    if (key.includes(NUL)) return render(path);
    const found = findNul(inner, path);
    if (found !== undefined) return found;
  }
  return undefined;
}

export const NUL_RULE = 'no_nul_character';
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/** The value with every NUL in its keys and strings replaced by U+FFFD, the replacement character. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes(NUL) ? value.replaceAll(NUL, '\uFFFD') : value) as T;
  if (value === null || typeof value !== 'object' || findNul(value) === undefined) return value;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)])) as T;
}
