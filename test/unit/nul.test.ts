import fc from 'fast-check';
import { findNul, withoutNul } from '../../workflows/runtime/nul';

describe('NUL characters (refused by Postgres text and jsonb)', () => {
  it('findNul names the first key or string value holding one, with the key escaped', () => {
    expect(findNul({ a: 'ok', b: [1, { c: 'x\u0000' }] }, ['initial_data'])).toBe('initial_data.b.1.c');
    expect(findNul({ 'k\u0000': 1 })).toBe('k\\u0000');
    expect(findNul('\u0000')).toBe('(value)');
    expect(findNul({ a: 'ok', b: [1, null, true, { c: 'x' }] })).toBeUndefined();
  });

  it('withoutNul leaves a value without NUL as it is, and removes every NUL otherwise', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const cleaned = withoutNul(value);
        expect(findNul(cleaned)).toBeUndefined();
        if (findNul(value) === undefined) expect(cleaned).toBe(value);
        else expect(JSON.stringify(cleaned)).toBe(JSON.stringify(value).replaceAll('\\u0000', '\uFFFD'));
      }),
      { numRuns: 500 },
    );
  });
});
