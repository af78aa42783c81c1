/**
 * Walks over JSON that comes from outside (request bodies, direct-start input, provider answers)
 * with an explicit stack instead of recursion: a value nested a million levels deep is still a
 * valid JSON.parse result, and a recursive walk over it exhausts the call stack.
 */

/** A field's path as a chain to its parent, so that visiting a deep value copies no arrays. */
export interface JsonPath {
  readonly key: string;
  readonly parent: JsonPath | undefined;
}

export type JsonVisit =
  | { kind: 'key' | 'string'; text: string; at: JsonPath | undefined }
  /** An object or array; the outermost one is at level 1. */
  | { kind: 'container'; level: number; at: JsonPath | undefined };

type Frame = { value: unknown; at: JsonPath | undefined; level: number; key?: string };

export function pathFrom(keys: readonly string[]): JsonPath | undefined {
  return keys.reduce<JsonPath | undefined>((parent, key) => ({ key, parent }), undefined);
}

export function pathKeys(at: JsonPath | undefined): string[] {
  const keys: string[] = [];
  for (let node = at; node; node = node.parent) keys.push(node.key);
  return keys.reverse();
}

/**
 * Visits every container, object key and string value depth first in document order (a key just
 * before its value) and returns the first thing a visit returns.
 */
export function walkJson<R>(root: unknown, visit: (item: JsonVisit) => R | undefined, prefix: readonly string[] = []): R | undefined {
  const stack: Frame[] = [{ value: root, at: pathFrom(prefix), level: 0 }];
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.key !== undefined) {
      const found = visit({ kind: 'key', text: frame.key, at: frame.at });
      if (found !== undefined) return found;
      stack.push({ value: frame.value, at: frame.at, level: frame.level });
      continue;
    }
    const { value, at } = frame;
    if (typeof value === 'string') {
      const found = visit({ kind: 'string', text: value, at });
      if (found !== undefined) return found;
    } else if (value !== null && typeof value === 'object') {
      const level = frame.level + 1;
      const found = visit({ kind: 'container', level, at });
      if (found !== undefined) return found;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], at: { key: String(i), parent: at }, level });
      } else {
        const entries = Object.entries(value);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [key, inner] = entries[i];
          stack.push({ value: inner, at: { key, parent: at }, level, key });
        }
      }
    }
  }
  return undefined;
}

/** The path of the first object or array nested more than `maxLevels` deep, or undefined. */
export function findTooDeep(root: unknown, maxLevels: number, prefix: readonly string[] = []): string[] | undefined {
  return walkJson(root, (item) => (item.kind === 'container' && item.level > maxLevels ? pathKeys(item.at) : undefined), prefix);
}

/** A copy of the value with `fix` applied to every key and string, or the value itself if `fix` changes none. */
export function mapJsonText<T>(root: T, fix: (text: string) => string): T {
  const changes = walkJson(root, (item) => (item.kind !== 'container' && fix(item.text) !== item.text ? true : undefined));
  if (!changes) return root;
  const pending: Array<Record<string, unknown> | unknown[]> = [];
  const copy = (value: unknown): unknown => {
    if (typeof value === 'string') return fix(value);
    if (value === null || typeof value !== 'object') return value;
    const out = Array.isArray(value) ? value.slice() : Object.fromEntries(Object.entries(value).map(([k, v]) => [fix(k), v]));
    pending.push(out);
    return out;
  };
  const result = copy(root);
  while (pending.length) {
    const node = pending.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) node[i] = copy(node[i]);
    } else {
      // Own data properties (Object.fromEntries makes even `__proto__` one), so assignment never reaches a setter.
      for (const key of Object.keys(node)) node[key] = copy(node[key]);
    }
  }
  return result as T;
}
