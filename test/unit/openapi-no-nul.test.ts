import { buildOpenApiDocument, patternExcludesNul } from '../../src/openapi/document';

const NO_NUL = '^[^\\u0000]*$';

describe('the NUL rule in the OpenAPI request schemas', () => {
  it('judges a pattern NUL-free only when anchored and built of classes and literals without NUL', () => {
    expect(patternExcludesNul('^[a-z][a-z0-9_]{0,62}$')).toBe(true);
    expect(patternExcludesNul('^a\\.b\\d+\\w*$')).toBe(true);
    for (const mayMatch of ['\\S', '^[a-z]+', '[a-z]+$', '^.*$', '^[^a]+$', '^\\S+$', '^a|b$', '^\\W$', '^\\D$', '^\\u0000$', '^\\x00$', '^a\\$', '^\\\\.$']) {
      expect([mayMatch, patternExcludesNul(mayMatch)]).toEqual([mayMatch, false]);
    }
  });

  it('states the rule once on every string of every request body and parameter, beside its own pattern only when that may match NUL', () => {
    const strings: Array<{ at: string; node: { pattern?: string; allOf?: Array<{ pattern?: string }> } }> = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if ([n.type].flat().includes('string') && n.const === undefined && n.enum === undefined) strings.push({ at, node: n });
      for (const [key, child] of Object.entries(n)) if (key !== 'propertyNames') walk(child, `${at}/${key}`);
    };
    for (const [path, item] of Object.entries(buildOpenApiDocument().paths)) {
      if (path.startsWith('/api/temporal-codec/')) continue;
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        for (const p of op.parameters ?? []) if (p.in !== 'header') walk(p.schema, `${method} ${path} ${p.name}`);
        for (const media of Object.values(op.requestBody?.content ?? {})) walk((media as { schema: unknown }).schema, `${method} ${path} body`);
      }
    }
    expect(strings.length).toBeGreaterThan(50);
    for (const { at, node } of strings) {
      const beside = (node.allOf ?? []).filter((s) => s.pattern === NO_NUL).length;
      const expected = node.pattern === NO_NUL || patternExcludesNul(node.pattern!) ? 0 : 1;
      expect([at, node.pattern !== undefined, beside]).toEqual([at, true, expected]);
    }
  });
});
