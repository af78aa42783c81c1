import { z } from 'zod';

const name = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/, 'must be a letter or _ followed by up to 99 letters, digits or _')
  // Such a name would read or set what every object inherits (`__proto__`, `constructor`), not a field.
  .refine((value) => !(value in Object.prototype), 'must not be a name every JavaScript object has (__proto__, constructor, toString …)');
/** As the Dag runtime names steps: its states are running_<id>, its children <parent_id>.<id>. */
const stepId = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'must be a lower-case letter followed by up to 62 lower-case letters, digits or _');

/** Any JSON value, one level deep: z.json()'s recursive schema would be a $ref the OpenAPI document cannot resolve. */
const jsonValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);

const mapping = z.union([
  z.strictObject({ from: z.literal('input'), name: name.describe('the free input of the composition feeding this field') }),
  z.strictObject({ from: z.literal('step'), step: stepId, field: name.describe("an output field of that step's type") }),
  z.strictObject({ const: jsonValue.describe('a fixed value (never a secret)') }),
]);

export const compositionStepSchema = z.strictObject({
  id: stepId.describe("the step's name: its state running_<id>, its child run <parent_id>.<id>, its output under <id>"),
  workflow_type: z.string().min(1).max(200).describe('a built-in workflow type, or "route"'),
  inputs: z.record(name, mapping).default({}),
});

/** POST and PUT /compositions. */
export const compositionBodySchema = z.strictObject({
  // The pattern says in the OpenAPI document what the trim enforces: not blank.
  name: z.string().trim().min(1).max(200).regex(/\S/, 'must not be blank'),
  steps: z.array(compositionStepSchema).min(1).max(50),
  exposed_to_end_users: z.boolean().default(false),
});

export type CompositionBody = z.output<typeof compositionBodySchema>;
export type CompositionStep = z.output<typeof compositionStepSchema>;
