import type { z } from 'zod';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { entitlementQuerySchema } from '../../src/entitlements/entitlement-list';
import { listEventsQuery } from '../../src/hooks/hooks.schemas';
import { listQuerySchema } from '../../src/runs/run-list';
import { fieldProblems } from '../../workflows/runtime/field-problems';

const LIMITS: Array<[string, z.ZodType, number, number]> = [
  ['/api/workflows', listQuerySchema, 100, 20],
  ['/api/hooks/endpoints/{uuid}/events', listEventsQuery, 500, 100],
  ['/api/entitlements', entitlementQuerySchema, 100, 20],
];

describe.each(LIMITS)('the limit query parameter of GET %s', (path, schema, max, fallback) => {
  it.each(['0x5', '1e1', '5.0', ' 5', '+5', '-1', '', 'Infinity', 'x'])('refuses %j, naming limit and the rule', (limit) => {
    const parsed = schema.safeParse({ limit });
    expect(parsed.success).toBe(false);
    expect(fieldProblems(parsed.error!, { limit })).toEqual([{ field: 'limit', rule: 'integer', message: 'must be a whole number in decimal digits (0-9)' }]);
  });

  it('takes decimal digits within its bounds, and defaults when absent', () => {
    expect(schema.parse({ limit: '1' })).toEqual({ limit: 1 });
    expect(schema.parse({ limit: String(max) })).toEqual({ limit: max });
    expect(schema.parse({})).toEqual({ limit: fallback });
    const outOfBounds = ['0', String(max + 1)].map((limit) => fieldProblems(schema.safeParse({ limit }).error!, { limit })[0].rule);
    expect(outOfBounds).toEqual(['minimum', 'maximum']);
  });

  it('is documented as the integer it takes', () => {
    const paths = buildOpenApiDocument().paths as unknown as Record<string, { get: { parameters: Array<{ name: string; schema: unknown }> } }>;
    const parameters = paths[path].get.parameters;
    expect(parameters.find((p) => p.name === 'limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: max, default: fallback });
  });
});
