import { z } from 'zod';

/**
 * A whole-number query parameter, as its OpenAPI schema (type integer) states it: decimal digits
 * only. `z.coerce.number` would also take `0x5`, `1e1`, `5.0` or ` 5` (Number's own syntax).
 */
export function queryInteger(bounds: { min: number; max: number; default: number }) {
  return z
    .string()
    .refine((raw) => /^[0-9]+$/.test(raw), { error: 'must be a whole number in decimal digits (0-9)', params: { rule: 'integer' } })
    .transform(Number)
    .pipe(z.number().int().min(bounds.min).max(bounds.max))
    .meta({ type: 'integer', minimum: bounds.min, maximum: bounds.max })
    .default(bounds.default);
}
