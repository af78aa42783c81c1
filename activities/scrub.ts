const REDACTED = '[redacted]';

/**
 * Credentials an answer may quote without our knowing their value (a truncated token, a
 * header echoed back): a scheme followed by a token68-like run long enough to be one.
 */
const AUTHORIZATION_VALUE = /\b(Bearer|Basic)(\s+)[A-Za-z0-9\-._~+/]{8,}=*/gi;

const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * The spellings a secret takes inside an answer that was not (or not fully) parsed: as
 * is, JSON-escaped (also with `\/` and `\uXXXX` for non-ASCII, as some encoders write),
 * JSON-escaped twice (a JSON document inside a JSON string) and percent-encoded.
 */
function spellings(secret: string): string[] {
  const escaped = jsonEscaped(secret);
  return [
    secret,
    escaped,
    escaped.replaceAll('/', '\\/'),
    escaped.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    jsonEscaped(escaped),
    encodeURIComponent(secret),
  ];
}

export interface Scrubber {
  text(value: string): string;
  /** Every string of a parsed answer, keys included. */
  value(value: unknown): unknown;
}

/** Cuts every given secret, in every spelling, and any Authorization value out of what a provider answered. */
export function scrubber(secrets: readonly (string | undefined)[]): Scrubber {
  // Longest first, so no shorter spelling splits a longer one before it is cut whole.
  const cut = [...new Set(secrets.filter((s): s is string => Boolean(s)).flatMap(spellings))].sort((a, b) => b.length - a.length);
  const text = (value: string) => cut.reduce((out, s) => out.split(s).join(REDACTED), value).replace(AUTHORIZATION_VALUE, `$1$2${REDACTED}`);
  const value = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(value);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, inner]) => [text(k), value(inner)]));
    return v;
  };
  return { text, value };
}

/** Every string inside a connection's secrets (a named map of webhook secrets included). */
export function secretValues(secrets: unknown): string[] {
  if (typeof secrets === 'string') return [secrets];
  if (Array.isArray(secrets)) return secrets.flatMap(secretValues);
  if (secrets && typeof secrets === 'object') return Object.values(secrets).flatMap(secretValues);
  return [];
}
