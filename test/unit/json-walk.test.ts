import { findTooDeep, type JsonVisit, mapJsonText, pathKeys, walkJson } from '../../workflows/runtime/json-walk';

const nested = (levels: number, asArray: boolean, leaf: unknown = 1) => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = asArray ? [value] : { k: value };
  return value;
};

describe('walking untrusted JSON without recursion', () => {
  it('visits containers, then each key just before its value, in document order', () => {
    const seen: string[] = [];
    walkJson({ a: 'x', b: [{ c: 'y' }, 'z'] }, (item: JsonVisit) => {
      seen.push(item.kind === 'container' ? `${item.level}@${pathKeys(item.at).join('.')}` : `${item.kind}:${item.text}`);
      return undefined;
    });
    expect(seen).toEqual(['1@', 'key:a', 'string:x', 'key:b', '2@b', '3@b.0', 'key:c', 'string:y', 'string:z']);
  });

  it('findTooDeep accepts exactly the limit and names the first container past it', () => {
    expect(findTooDeep(nested(3, false), 3)).toBeUndefined();
    expect(findTooDeep(nested(4, false), 3)).toEqual(['k', 'k', 'k']);
    expect(findTooDeep({ ok: [1], deep: [[[[]]]] }, 3, ['initial_data'])).toEqual(['initial_data', 'deep', '0', '0']);
    expect(findTooDeep('text', 0)).toBeUndefined();
  });

  it.each([
    ['arrays', true],
    ['objects', false],
  ])('findTooDeep stops at the limit in %s nested 1,000,000 deep', (_, asArray) => {
    const found = findTooDeep(nested(1_000_000, asArray), 64);
    expect(found).toHaveLength(64);
  });

  it('mapJsonText copies only when something changes, keeping __proto__ an own key', () => {
    const clean = { a: ['b'] };
    expect(mapJsonText(clean, (s) => s.toUpperCase().toLowerCase())).toBe(clean);
    const hostile = JSON.parse('{"__proto__": {"x": "y"}, "a": ["y"]}');
    const mapped = mapJsonText(hostile, (s) => (s === 'y' ? 'Y' : s));
    expect(Object.getPrototypeOf(mapped)).toBe(Object.prototype);
    expect(Object.keys(mapped)).toEqual(['__proto__', 'a']);
    expect(mapped.a).toEqual(['Y']);
    expect(Object.getOwnPropertyDescriptor(mapped, '__proto__')?.value).toEqual({ x: 'Y' });
    expect(hostile.a).toEqual(['y']);
  });

  it('mapJsonText rewrites JSON nested 200,000 deep without exhausting the stack', () => {
    let mapped = mapJsonText(nested(200_000, false, 'a'), (s) => s.toUpperCase()) as unknown;
    let levels = 0;
    while (typeof mapped === 'object' && mapped !== null) {
      mapped = (mapped as { K: unknown }).K;
      levels += 1;
    }
    expect([levels, mapped]).toEqual([200_000, 'A']);
  });
});
