import { z } from 'zod';
import { dagOutputFields } from '../runtime/dag';
import { type DagPlan, ROUTE } from '../runtime/dag-plan';
import type { WorkflowDefinition } from '../runtime/definition';

/**
 * A composed workflow type, `virtual.<composition_uuid>@<version>`: an organization's plan of
 * built-in types run as child workflows, one layer per step. The plan is plain JSON (stored per
 * organization, carried by each run), and everything else about the type (its free inputs, their
 * schemas, which of them are secret) is derived from the plan and the built-in definitions, so
 * the API and the worker agree on it without a database read in workflow code.
 */
export const COMPOSITION_PREFIX = 'virtual.';

export type Plan = DagPlan;

/** Names a composed run's data already uses (the Dag's own outputs): no step id nor free input may take one. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(Object.keys(dagOutputFields));

export type DefinitionLookup = (workflowType: string) => WorkflowDefinition | undefined;

const COMPOSED_TYPE = /^virtual\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@([1-9][0-9]{0,8})$/;

export function composedType(compositionUuid: string, version: number): string {
  return `${COMPOSITION_PREFIX}${compositionUuid}@${version}`;
}

/** `virtual.<uuid>@N` → its parts; undefined for anything else (built-in types included). */
export function parseComposedType(workflowType: string): { composition_uuid: string; version: number } | undefined {
  const match = COMPOSED_TYPE.exec(workflowType);
  return match ? { composition_uuid: match[1], version: Number(match[2]) } : undefined;
}

/** A built-in type's input fields, by name (a type whose input is no object has none). */
export function inputFields(def: WorkflowDefinition): Record<string, z.ZodType> {
  return def.input instanceof z.ZodObject ? (def.input.shape as Record<string, z.ZodType>) : {};
}

export function outputFields(def: WorkflowDefinition): Record<string, z.ZodType> {
  return def.output instanceof z.ZodObject ? (def.output.shape as Record<string, z.ZodType>) : {};
}

export const isRequired = (field: z.ZodType) => !field.safeParse(undefined).success;

export interface FreeInput {
  /** The first step field it feeds: its schema is the input's schema. */
  schema: z.ZodType;
  required: boolean;
  secret: boolean;
  /** Every step field the input feeds, as `step.field`. */
  feeds: Array<{ step: string; field: string; workflow_type: string }>;
}

/** A step input bound by the composition itself (a const or another step's output): not startable. */
export interface BoundInput {
  step: string;
  field: string;
  source: string;
}

/** The composition's free inputs (what a run is started with) and the step fields it binds itself. */
export function planInputs(plan: Plan, lookup: DefinitionLookup): { free: Map<string, FreeInput>; bound: BoundInput[] } {
  const free = new Map<string, FreeInput>();
  const bound: BoundInput[] = [];
  for (const layer of plan.layers) {
    const def = layer.workflow_type === ROUTE ? undefined : lookup(layer.workflow_type);
    const fields = def ? inputFields(def) : {};
    for (const [field, mapping] of Object.entries(layer.inputs)) {
      if (!('from' in mapping) || mapping.from !== 'input') {
        const source = 'const' in mapping ? 'a constant' : `the output ${mapping.step}.${mapping.field}`;
        bound.push({ step: layer.step, field, source });
        continue;
      }
      const schema = fields[field] ?? z.unknown();
      const required = def ? isRequired(schema) : false;
      const secret = Boolean(def?.secret_fields.includes(field));
      const feed = { step: layer.step, field, workflow_type: layer.workflow_type };
      const seen = free.get(mapping.name);
      if (!seen) {
        free.set(mapping.name, { schema, required, secret, feeds: [feed] });
        continue;
      }
      seen.feeds.push(feed);
      seen.secret ||= secret;
      if (required && !seen.required) Object.assign(seen, { schema, required });
    }
  }
  return { free, bound };
}

/**
 * The composition's input: its free inputs, strict. A field the composition binds itself is named
 * as such rather than as merely unknown, so a caller learns why it may not set it.
 */
export function compositionInputSchema(plan: Plan, lookup: DefinitionLookup) {
  const { free, bound } = planInputs(plan, lookup);
  const shape: Record<string, z.ZodType> = {};
  for (const [name, input] of free) shape[name] = input.required ? input.schema : input.schema.optional();
  const boundNames = new Map<string, BoundInput>();
  for (const b of bound) if (!free.has(b.field) && !boundNames.has(b.field)) boundNames.set(b.field, b);
  for (const [name, b] of boundNames) {
    shape[name] = z
      .unknown()
      .refine((v) => v === undefined, {
        message: `is bound by the composition (step ${b.step}'s ${b.field} is ${b.source}); it is not an input`,
        params: { rule: 'bound_input' },
      })
      .optional();
  }
  const freeOnly = z.strictObject(Object.fromEntries([...free].map(([name]) => [name, shape[name]])));
  return { input: z.strictObject(shape), freeOnly, free };
}

/** The free inputs that carry a secret of a step, or a URL the step will call. */
export function compositionFieldRoles(free: Map<string, FreeInput>, lookup: DefinitionLookup) {
  const secret_fields: string[] = [];
  const outbound_url_fields: string[] = [];
  const connection_url_fields: NonNullable<WorkflowDefinition['connection_url_fields']> = [];
  for (const [name, input] of free) {
    if (input.secret) secret_fields.push(name);
    for (const feed of input.feeds) {
      const def = lookup(feed.workflow_type);
      if (def?.outbound_url_fields.includes(feed.field) && !outbound_url_fields.includes(name)) outbound_url_fields.push(name);
      for (const binding of def?.connection_url_fields ?? []) {
        if (binding.connection !== feed.field) continue;
        const url = [...free].find(([, i]) => i.feeds.some((f) => f.step === feed.step && f.field === binding.url));
        if (url) connection_url_fields.push({ connection: name, url: url[0], plugin: binding.plugin });
      }
    }
  }
  return { secret_fields, outbound_url_fields, connection_url_fields };
}
