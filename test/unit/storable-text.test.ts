import fc from 'fast-check';
import { findNul, findUnstorableText, renderPath, storable, wellFormed } from '../../workflows/runtime/storable-text';

/** Keys and strings built from NULs, both surrogate halves, a real pair and ordinary letters. */
const hostileJson = fc.jsonValue({ stringUnit: fc.constantFrom('a', 'é', '\u0000', '\ud800', '\udc00', '\ud83d\ude00') });

/** The obvious recursive definition, as the oracle for the iterative one on small values. */
const reference = (value: unknown, fix: (s: string) => string): unknown => {
  if (typeof value === 'string') return fix(value);
  if (Array.isArray(value)) return value.map((v) => reference(v, fix));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [fix(k), reference(v, fix)]));
  return value;
};

const nested = (levels: number, leaf: unknown, asArray = false) => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = asArray ? [value] : { k: value };
  return value;
};

describe('NUL characters (refused by Postgres text and jsonb)', () => {
  it('findNul names the first key or string value holding one, with the key escaped', () => {
    expect(findNul({ a: 'ok', b: [1, { c: 'x\u0000' }] }, ['initial_data'])).toBe('initial_data.b.1.c');
    expect(findNul({ 'k\u0000': 1 })).toBe('k\\u0000');
    expect(findNul('\u0000')).toBe('(value)');
    expect(findNul({ a: 'ok', b: [1, null, true, { c: 'x' }] })).toBeUndefined();
  });
});

describe('text Postgres cannot store (NUL, lone surrogates)', () => {
  it('names a lone surrogate in a value with the rule well_formed_unicode', () => {
    expect(findUnstorableText({ a: 'ok', b: ['x\ud800y'] }, ['initial_data'])).toEqual({
      field: 'initial_data.b.0',
      rule: 'well_formed_unicode',
      message: expect.stringContaining('lone surrogate'),
    });
    expect(findUnstorableText({ low: '\udfff' })?.field).toBe('low');
  });

  it('names a lone surrogate in a key with the key escaped, so the field itself is well-formed', () => {
    const problem = findUnstorableText({ outer: { 'k\udc00': 1 } }, ['initial_data']);
    expect(problem).toMatchObject({ field: 'initial_data.outer.k\\udc00', rule: 'well_formed_unicode' });
    expect(problem!.field.isWellFormed()).toBe(true);
    expect(renderPath(['a\u0000', 'b\ud800'])).toBe('a\\u0000.b\\ud800');
  });

  it('accepts surrogate pairs and reports the first problem in document order', () => {
    expect(findUnstorableText({ emoji: '\ud83d\ude00', [`\ud83d\ude00`]: ['\u{10000}'] })).toBeUndefined();
    expect(findUnstorableText({ a: '\ud800', b: '\u0000' })?.rule).toBe('well_formed_unicode');
    expect(findUnstorableText({ a: '\u0000', b: '\ud800' })?.rule).toBe('no_nul_character');
    expect(findUnstorableText({ 'k\u0000': '\ud800' })).toMatchObject({ field: 'k\\u0000', rule: 'no_nul_character' });
  });

  it('finds a problem at the bottom of JSON nested 200,000 deep without exhausting the stack', () => {
    expect(findUnstorableText(nested(200_000, '\ud800', true))?.rule).toBe('well_formed_unicode');
    expect(findNul(nested(200_000, 'x\u0000'))).toMatch(/^k(\.k)+$/);
    expect(findUnstorableText(nested(200_000, 'fine'))).toBeUndefined();
  });

  it('storable replaces every NUL and lone surrogate in keys and strings with U+FFFD, and nothing else', () => {
    const fix = (s: string) => s.replaceAll('\u0000', '\uFFFD').toWellFormed();
    fc.assert(
      fc.property(hostileJson, (value) => {
        const cleaned = storable(value);
        expect(findUnstorableText(cleaned)).toBeUndefined();
        expect(cleaned).toEqual(reference(value, fix));
        if (findUnstorableText(value) === undefined) expect(cleaned).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it('wellFormed replaces only lone surrogates', () => {
    fc.assert(
      fc.property(hostileJson, (value) => {
        expect(wellFormed(value)).toEqual(reference(value, (s) => s.toWellFormed()));
      }),
      { numRuns: 300 },
    );
    expect(wellFormed({ '\ud800': ['a\u0000\udc00'] })).toEqual({ '\uFFFD': ['a\u0000\uFFFD'] });
  });
});
