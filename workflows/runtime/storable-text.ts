import type { FieldProblem } from './field-problems';
import { type JsonPath, mapJsonText, pathKeys, walkJson } from './json-walk';

/**
 * Text Postgres cannot store: text and jsonb refuse the NUL character (U+0000), and jsonb refuses
 * a lone surrogate (U+D800–U+DFFF without its pair, which JSON can carry as an escape such as
 * "\ud800"). The API and the runtime refuse input holding either, and the projection and the
 * provider calls replace them with U+FFFD, so a write can never fail on them.
 */
const NUL = '\u0000';

export const NUL_RULE = 'no_nul_character';
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
export const WELL_FORMED_RULE = 'well_formed_unicode';
export const WELL_FORMED_MESSAGE = 'must be well-formed Unicode (no lone surrogate, U+D800 to U+DFFF without its pair)';

const LONE_SURROGATE = /\p{Surrogate}/gu;
const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A field path as text, with a NUL or a lone surrogate in a key written as its `\uXXXX` escape. */
export function renderPath(keys: readonly string[]): string {
  return keys.map((key) => key.replaceAll(NUL, escape(NUL)).replace(LONE_SURROGATE, escape)).join('.');
}

const field = (at: JsonPath | undefined) => renderPath(pathKeys(at)) || '(value)';

/** The path of the first key or string value that holds a NUL, or undefined. */
export function findNul(value: unknown, prefix: readonly string[] = []): string | undefined {
  return walkJson(value, (item) => (item.kind !== 'container' && item.text.includes(NUL) ? field(item.at) : undefined), prefix);
}

/** The first key or string value Postgres cannot store, as the field, rule and message to answer with. */
export function findUnstorableText(value: unknown, prefix: readonly string[] = []): FieldProblem | undefined {
  return walkJson(
    value,
    (item) => {
      if (item.kind === 'container') return undefined;
      if (item.text.includes(NUL)) return { field: field(item.at), rule: NUL_RULE, message: NUL_MESSAGE };
      if (!item.text.isWellFormed()) return { field: field(item.at), rule: WELL_FORMED_RULE, message: WELL_FORMED_MESSAGE };
      return undefined;
    },
    prefix,
  );
}

/** The value with every lone surrogate in its keys and strings replaced by U+FFFD, the replacement character. */
export function wellFormed<T>(value: T): T {
  return mapJsonText(value, (text) => text.toWellFormed());
}

/** The value with every NUL and lone surrogate in its keys and strings replaced by U+FFFD. */
export function storable<T>(value: T): T {
  return mapJsonText(value, (text) => (text.includes(NUL) ? text.replaceAll(NUL, '\uFFFD') : text).toWellFormed());
}
