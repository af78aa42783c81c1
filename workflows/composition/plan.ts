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

/**
 * What a step's type requires beyond its required fields, as its input's JSON Schema declares it:
 * an `anyOf` of `required` sets (esign: base_url, or connection_uuid). A free input a set needs is
 * given only at start, so the composed input must ask for it there.
 */
export interface StepRequirement {
  step: string;
  /** The type's sets of fields, one of which the step must be given. */
  declared: string[][];
  /** The sets the composition can satisfy, by free input: one must be given in full at start; none, and the step cannot run. */
  alternatives: string[][];
}

/** A type's declared alternatives (see StepRequirement); empty when it declares none, or anything this cannot read. */
function requiredAlternatives(def: WorkflowDefinition): string[][] {
  const anyOf = (def.input.meta() as { anyOf?: unknown } | undefined)?.anyOf;
  if (!Array.isArray(anyOf)) return [];
  const sets = anyOf.map((a) => {
    const only = a && typeof a === 'object' && Object.keys(a).length === 1 ? (a as { required?: unknown }).required : undefined;
    return Array.isArray(only) && only.every((f) => typeof f === 'string') ? (only as string[]) : undefined;
  });
  return sets.every((s) => s !== undefined) ? sets : [];
}

/** A step's requirement on the composed input; undefined when it has none or the composition itself satisfies it (a constant, a step's output). */
export function stepRequirement(def: WorkflowDefinition, step: string, inputs: Plan['layers'][number]['inputs']): StepRequirement | undefined {
  const declared = requiredAlternatives(def);
  const mapped = declared.filter((set) => set.every((f) => Object.hasOwn(inputs, f)));
  const freeName = (f: string) => {
    const m = inputs[f];
    return 'from' in m && m.from === 'input' ? m.name : undefined;
  };
  if (!declared.length || mapped.some((set) => set.every((f) => freeName(f) === undefined))) return undefined;
  const alternatives = mapped.map((set) => [...new Set(set.flatMap((f) => freeName(f) ?? []))]);
  return { step, declared, alternatives };
}

/** A step input bound by the composition itself (a const or another step's output): not startable. */
export interface BoundInput {
  step: string;
  field: string;
  source: string;
}

/** The composition's free inputs (what a run is started with), the step fields it binds itself, and its steps' requirements on the free inputs. */
export function planInputs(plan: Plan, lookup: DefinitionLookup): { free: Map<string, FreeInput>; bound: BoundInput[]; requirements: StepRequirement[] } {
  const free = new Map<string, FreeInput>();
  const bound: BoundInput[] = [];
  const requirements: StepRequirement[] = [];
  for (const layer of plan.layers) {
    const def = layer.workflow_type === ROUTE ? undefined : lookup(layer.workflow_type);
    const fields = def ? inputFields(def) : {};
    const requirement = def && stepRequirement(def, layer.step, layer.inputs);
    if (requirement) requirements.push(requirement);
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
  return { free, bound, requirements };
}

/** `a or b and c`: a requirement's sets of fields, for a message. */
export const either = (sets: string[][]) => sets.map((set) => set.join(' and ')).join(' or ');

/**
 * The steps' requirements an input leaves unmet, each named at one free input it lacks (one of
 * `reported`, the fields already named as missing, is not named again): what a start is refused for.
 */
export function unmetRequirements(requirements: StepRequirement[], data: unknown, reported = new Set<string>()) {
  const given = data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {};
  const unmet: Array<{ path: string[]; message: string }> = [];
  const report = (name: string | undefined, message: string) => {
    if (name !== undefined && reported.has(name)) return;
    if (name !== undefined) reported.add(name);
    unmet.push({ path: name === undefined ? [] : [name], message });
  };
  for (const r of requirements) {
    const needs = `step ${r.step} needs ${either(r.declared)}`;
    if (r.alternatives.some((set) => set.every((name) => given[name] !== undefined))) continue;
    if (!r.alternatives.length) report(undefined, `cannot be met: ${needs}, and this version of the composition maps none of them`);
    else if (r.alternatives.length === 1) for (const name of r.alternatives[0].filter((n) => given[n] === undefined)) report(name, `is required: ${needs}`);
    else report(r.alternatives[0].find((n) => given[n] === undefined), `is required without ${either(r.alternatives.slice(1))}: ${needs}`);
  }
  return unmet;
}

/**
 * The composition's input: its free inputs, strict. A field the composition binds itself is named
 * as such rather than as merely unknown, so a caller learns why it may not set it. Its steps'
 * requirements (see StepRequirement) are checked unless `stepRequirements` is false, as they were
 * not for runs recorded before; `freeOnly`'s JSON Schema states them as `required` and `anyOf`.
 */
export function compositionInputSchema(plan: Plan, lookup: DefinitionLookup, stepRequirements = true) {
  const { free, bound, requirements } = planInputs(plan, lookup);
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
  const freeShape = Object.fromEntries([...free].map(([name]) => [name, shape[name]]));
  const requiredByField = [...free].filter(([, input]) => input.required).map(([name]) => name);
  let input = z.strictObject(shape);
  if (stepRequirements && requirements.length) {
    input = input.superRefine(
      (data, ctx) => {
        const missing = new Set(requiredByField.filter((name) => data[name] === undefined));
        for (const u of unmetRequirements(requirements, data, missing)) {
          ctx.addIssue({ code: 'custom', path: u.path, message: u.message, params: { rule: 'required' } });
        }
      },
      // Also when other fields failed, so that every failing field is named at once.
      { when: (payload) => payload.value !== null && typeof payload.value === 'object' },
    );
  }
  return { input, freeOnly: z.strictObject(freeShape).meta(requirementsSchema(freeShape, requiredByField, requirements)), free };
}

/** The requirements in JSON Schema: a set of its own is `required`; several sets, an `anyOf`. */
function requirementsSchema(shape: Record<string, z.ZodType>, requiredByField: string[], requirements: StepRequirement[]) {
  const required = new Set([...requiredByField, ...requirements.filter((r) => r.alternatives.length === 1).flatMap((r) => r.alternatives[0])]);
  const groups = requirements.filter((r) => r.alternatives.length > 1).map((r) => ({ anyOf: r.alternatives.map((set) => ({ required: set })) }));
  return {
    ...(required.size > requiredByField.length ? { required: Object.keys(shape).filter((name) => required.has(name)) } : {}),
    ...(groups.length === 1 ? groups[0] : groups.length ? { allOf: groups } : {}),
  };
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
