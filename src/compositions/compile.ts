import type { z } from 'zod';
import {
  either,
  type FreeInput,
  inputFields,
  isRequired,
  outputFields,
  planInputs,
  RESERVED_NAMES,
  stepRequirement,
  type DefinitionLookup,
  type Plan,
} from '../../workflows/composition/plan';
import { ROUTE, ROUTE_OUTPUT as ROUTE_FIELD } from '../../workflows/runtime/dag-plan';
import { END_USER_FIELDS, type RunData, type WorkflowDefinition } from '../../workflows/runtime/definition';
import { jsonSchema } from '../catalog/json-schema';
import type { FieldProblem } from '../common/api-error';
import type { StartChecks } from '../runs/start-checks';
import type { CompositionStep } from './composition-body';

type JsonTypes = Set<string> | 'any';

const jsonTypeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** The JSON types a JSON Schema admits ('any' when it does not say). */
function typesOf(schema: any): JsonTypes {
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.const !== undefined) return new Set([jsonTypeOf(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonTypeOf));
  if (schema.type) return new Set([schema.type].flat());
  const members = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(members)) {
    const all = new Set<string>();
    for (const m of members) {
      const t = typesOf(m);
      if (t === 'any') return 'any';
      t.forEach((x) => all.add(x));
    }
    return all;
  }
  return 'any';
}

/** Whether every value the source may hold has a JSON type the target accepts (an integer is a number). */
function compatible(source: JsonTypes, target: JsonTypes): boolean {
  if (source === 'any' || target === 'any') return true;
  return [...source].every((t) => target.has(t) || (t === 'integer' && target.has('number')));
}

const describe = (t: JsonTypes) => (t === 'any' ? 'any' : [...t].sort().join(' | '));

const fieldSchemas = new Map<string, { input: Record<string, unknown>; output: Record<string, unknown> }>();

function jsonFields(def: WorkflowDefinition) {
  let cached = fieldSchemas.get(def.workflow_type);
  if (!cached) {
    const props = (s: z.ZodType, io: 'input' | 'output') => ((jsonSchema(s, io) as { properties?: Record<string, unknown> }).properties ?? {});
    cached = { input: props(def.input, 'input'), output: props(def.output, 'output') };
    fieldSchemas.set(def.workflow_type, cached);
  }
  return cached;
}

/** What a start of the composing organization checks beyond a type's input schema (see StartChecks). */
export interface ConstantChecks {
  organization_uuid: string;
  checks: Pick<StartChecks, 'outboundProblem' | 'shapeProblem'>;
}

/**
 * Checks a composition's steps against the built-in types and compiles them into a plan: layers
 * in dependency order (the order given, where the mappings allow it). Every problem is named by
 * the step's field path and, in its message, by the step's id. `start`: the API's checks of a
 * start, which a step's constants meet too; without them (a test's plan) only their types' schemas.
 */
export function compileComposition(
  steps: CompositionStep[],
  lookup: DefinitionLookup,
  exposedToEndUsers = false,
  start?: ConstantChecks,
): { plan: Plan } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const problem = (field: string, rule: string, step: CompositionStep, message: string) =>
    problems.push({ field, rule, message: `step ${step.id}: ${message}` });
  const index = new Map<string, number>();
  const inputNames = new Map<string, string>();
  steps.forEach((s, i) => {
    if (index.has(s.id)) problem(`steps.${i}.id`, 'unique', s, 'another step has this id');
    else index.set(s.id, i);
    if (RESERVED_NAMES.has(s.id)) problem(`steps.${i}.id`, 'reserved', s, `${s.id} is an output of every composed run; name the step otherwise`);
    for (const [field, mapping] of Object.entries(s.inputs)) {
      if (!('from' in mapping) || mapping.from !== 'input') continue;
      if (!inputNames.has(mapping.name)) inputNames.set(mapping.name, `step ${s.id}'s ${field}`);
      if (RESERVED_NAMES.has(mapping.name)) {
        problem(`steps.${i}.inputs.${field}`, 'reserved', s, `${mapping.name} is an output of every composed run; name the input otherwise`);
      }
    }
  });
  // A run keeps its free inputs and its steps' outputs side by side in its data, by name.
  steps.forEach((s, i) => {
    const feeds = inputNames.get(s.id);
    if (feeds) problem(`steps.${i}.id`, 'name_clash', s, `${s.id} is also the name of a free input (feeding ${feeds}), which this step's output would replace in the run's data; name one of them otherwise`);
  });
  const defs = steps.map((s) => (s.workflow_type === ROUTE ? undefined : lookup(s.workflow_type)));
  const routeSource = steps.map(() => -1);
  const deps = steps.map(() => new Map<number, string>());

  steps.forEach((step, i) => {
    const def = defs[i];
    if (step.workflow_type === ROUTE) {
      const source = findRouteSource(defs, i);
      if (source < 0) problem(`steps.${i}.workflow_type`, 'no_route_source', step, `no earlier step declares ${ROUTE_FIELD} to route from`);
      else {
        routeSource[i] = source;
        deps[i].set(source, `steps.${i}.workflow_type`);
      }
    } else if (!def) {
      problem(`steps.${i}.workflow_type`, 'unknown_type', step, `${step.workflow_type} is not a built-in workflow type (nor "${ROUTE}")`);
    }
    const targets = def ? inputFields(def) : undefined;
    const targetJson = def ? jsonFields(def).input : undefined;
    const identityFields = targets ? Object.keys(END_USER_FIELDS).filter((f) => Object.hasOwn(targets, f)) : [];
    if (exposedToEndUsers && identityFields.length) {
      // The API pins these from the token only for the built-in type itself: in a composition they
      // would come from whatever the end user sent.
      problem(`steps.${i}.workflow_type`, 'end_user_identity', step, `${step.workflow_type} takes ${identityFields.join(' and ')} from an end user's token, so a composition exposed to end users cannot include it`);
    }
    for (const [field, mapping] of Object.entries(step.inputs)) {
      const at = `steps.${i}.inputs.${field}`;
      if (targets && !Object.hasOwn(targets, field)) {
        problem(at, 'unknown_field', step, `${field} is not an input field of ${step.workflow_type}`);
        continue;
      }
      if ('const' in mapping) {
        if (def?.secret_fields.includes(field)) {
          problem(at, 'secret_const', step, `${field} is a secret: map it from an input ({"from": "input", "name": …}), never store it in the composition`);
          continue;
        }
        const parsed = targets?.[field].safeParse(mapping.const);
        if (parsed && !parsed.success) problem(at, 'type_mismatch', step, `the constant does not fit ${field}: ${parsed.error.issues[0].message}`);
        continue;
      }
      if (mapping.from !== 'step') continue;
      const from = index.get(mapping.step);
      if (from === undefined) {
        problem(at, 'unknown_step', step, `no step ${mapping.step} to take ${mapping.field} from`);
        continue;
      }
      deps[i].set(from, at);
      const sourceDef = defs[from];
      if (!sourceDef) continue; // a route step's outputs are its routed type's, known only when it runs
      const sourceJson = jsonFields(sourceDef).output;
      if (!Object.hasOwn(outputFields(sourceDef), mapping.field)) {
        problem(at, 'unknown_field', step, `${mapping.field} is not an output field of step ${mapping.step} (${sourceDef.workflow_type})`);
        continue;
      }
      if (sourceDef.secret_fields.includes(mapping.field)) {
        // A step's outputs are its redacted state_data: the value mapped would be the literal "[redacted]".
        problem(at, 'secret_output', step, `${mapping.step}.${mapping.field} is a secret, "[redacted]" in every output of ${sourceDef.workflow_type}: map the free input that fed it instead`);
        continue;
      }
      if (!targetJson) continue;
      const source = typesOf(sourceJson[mapping.field]);
      const target = typesOf(targetJson[field]);
      if (!compatible(source, target)) {
        problem(at, 'type_mismatch', step, `${mapping.step}.${mapping.field} is ${describe(source)}; ${field} takes ${describe(target)}`);
      }
    }
    for (const [field, schema] of Object.entries(targets ?? {})) {
      if (isRequired(schema) && !(field in step.inputs)) {
        problem(`steps.${i}.inputs.${field}`, 'required', step, `${step.workflow_type} requires ${field}: map it from an input, a step or a constant`);
      }
    }
    const requirement = def && stepRequirement(def, step.id, step.inputs);
    if (requirement && !requirement.alternatives.length) {
      const named = requirement.declared[0][0];
      problem(`steps.${i}.inputs.${named}`, 'required', step, `${step.workflow_type} requires ${either(requirement.declared)}: map one of them from an input, a step or a constant`);
    }
    if (def) problems.push(...constantProblems(def, step, i, start));
  });
  problems.push(...cycleProblems(steps, deps));
  if (problems.length) return { problems };

  const order = layerOrder(deps);
  const plan: Plan = {
    layers: order.map((i, n) => ({
      layer: `${String(n + 1).padStart(2, '0')}_${steps[i].id}`,
      step: steps[i].id,
      workflow_type: steps[i].workflow_type,
      inputs: steps[i].inputs,
    })),
  };
  problems.push(...routeOrderProblems(steps, defs, order, routeSource), ...freeInputProblems(steps, plan, lookup));
  return problems.length ? { problems } : { plan };
}

/**
 * A step's constants as a start of its type would be checked: the type's rules across fields when
 * every input is a constant (the child's input is then known in full; each field's own rules are
 * checked with its mapping), and, given the API's checks, the outbound policy for a URL the worker
 * will call, the run's organization, and the limits on what a run carries.
 */
function constantProblems(def: WorkflowDefinition, step: CompositionStep, i: number, start: ConstantChecks | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const push = (field: string | undefined, rule: string, message: string) =>
    problems.push({ field: field === undefined ? `steps.${i}.inputs` : `steps.${i}.inputs.${field}`, rule, message: `step ${step.id}: ${message}` });
  const fields = inputFields(def);
  const constants: RunData = {};
  for (const [field, mapping] of Object.entries(step.inputs)) if ('const' in mapping && Object.hasOwn(fields, field)) constants[field] = mapping.const;
  const fits = (field: string) => fields[field].safeParse(constants[field]).success;
  if (Object.keys(constants).length === Object.keys(step.inputs).length) {
    for (const issue of def.input.safeParse(constants).error?.issues ?? []) {
      const field = issue.path.length ? String(issue.path[0]) : undefined;
      // Named already: a constant its field refuses, or a field left unmapped that the type requires.
      if (field !== undefined && (Object.hasOwn(constants, field) ? !fits(field) : issue.code === 'invalid_type')) continue;
      push(field, 'type_mismatch', `the input its constants make fails ${def.workflow_type}${field === undefined ? '' : ` at ${field}`}: ${issue.message}`);
    }
  }
  if (!start) return problems;
  for (const field of def.outbound_url_fields) {
    const url = constants[field];
    const refused = typeof url === 'string' && fits(field) ? start.checks.outboundProblem(url) : undefined;
    if (refused) push(field, 'outbound_policy', refused);
  }
  const orgField = def.organization_field;
  if (orgField && Object.hasOwn(constants, orgField) && constants[orgField] !== start.organization_uuid) {
    push(orgField, 'organization_mismatch', `${orgField} must be the organization the composition belongs to: a run acts only for its own`);
  }
  const shape = start.checks.shapeProblem(constants);
  if (shape) push(undefined, shape.rule, `the input its constants make ${shape.message}`);
  return problems;
}

/**
 * A constant connection and a constant URL its secrets would be sent to: checked against the
 * connection's stored destination, as a start naming both is (the activity checks again before any call).
 */
export async function constantDestinationProblems(
  steps: CompositionStep[],
  lookup: DefinitionLookup,
  organizationUuid: string,
  checks: Pick<StartChecks, 'connectionDestinationProblem'>,
): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  for (const [i, step] of steps.entries()) {
    for (const binding of lookup(step.workflow_type)?.connection_url_fields ?? []) {
      const connection = step.inputs[binding.connection];
      const url = step.inputs[binding.url];
      if (!connection || !url || !('const' in connection) || !('const' in url)) continue;
      if (typeof connection.const !== 'string' || typeof url.const !== 'string') continue;
      const refused = await checks.connectionDestinationProblem(organizationUuid, binding.plugin, connection.const, url.const);
      if (refused) problems.push({ field: `steps.${i}.inputs.${binding.url}`, rule: 'connection_destination', message: `step ${step.id}: ${refused}` });
    }
  }
  return problems;
}

function declaresRoute(def: WorkflowDefinition | undefined) {
  return Boolean(def && Object.hasOwn(outputFields(def), ROUTE_FIELD));
}

function findRouteSource(defs: Array<WorkflowDefinition | undefined>, before: number): number {
  for (let j = before - 1; j >= 0; j -= 1) if (declaresRoute(defs[j])) return j;
  return -1;
}

/** Each cycle once, named at the mapping that closes it. */
function cycleProblems(steps: CompositionStep[], deps: Array<Map<number, string>>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const state = steps.map(() => 'new' as 'new' | 'open' | 'done');
  const path: number[] = [];
  const visit = (i: number) => {
    state[i] = 'open';
    path.push(i);
    for (const [dep, at] of deps[i]) {
      if (state[dep] === 'open') {
        const loop = [...path.slice(path.indexOf(dep)), dep].map((k) => steps[k].id);
        problems.push({ field: at, rule: 'cycle', message: `step ${steps[i].id}: its inputs form a cycle (${loop.reverse().join(' → ')})` });
      } else if (state[dep] === 'new') visit(dep);
    }
    path.pop();
    state[i] = 'done';
  };
  steps.forEach((_, i) => state[i] === 'new' && visit(i));
  return problems;
}

/** Topological order, keeping the given order wherever the dependencies allow. */
function layerOrder(deps: Array<Map<number, string>>): number[] {
  const order: number[] = [];
  const placed = new Set<number>();
  while (order.length < deps.length) {
    const next = deps.findIndex((d, i) => !placed.has(i) && [...d.keys()].every((k) => placed.has(k)));
    order.push(next);
    placed.add(next);
  }
  return order;
}

/** The runtime routes from the nearest earlier layer declaring route_workflow_type: it must be the step chosen here. */
function routeOrderProblems(steps: CompositionStep[], defs: Array<WorkflowDefinition | undefined>, order: number[], routeSource: number[]) {
  const problems: FieldProblem[] = [];
  order.forEach((i, position) => {
    if (routeSource[i] < 0) return;
    const nearest = order.slice(0, position).reverse().find((j) => declaresRoute(defs[j]));
    if (nearest !== routeSource[i]) {
      problems.push({
        field: `steps.${i}.workflow_type`,
        rule: 'route_source',
        message: `step ${steps[i].id}: its inputs make it run after step ${steps[nearest!].id}, which would then be the step it routes from instead of ${steps[routeSource[i]].id}`,
      });
    }
  });
  return problems;
}

/**
 * A free input feeding several step fields must fit each of them, and one feeding a secret field
 * may feed only secret fields: a child redacts its own secret fields only, so the same value in
 * any other field would be shown in its run and sent where that field goes (a URL path, say).
 */
function freeInputProblems(steps: CompositionStep[], plan: Plan, lookup: DefinitionLookup): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const at = (step: string, field: string) => `steps.${steps.findIndex((s) => s.id === step)}.inputs.${field}`;
  for (const [name, input] of planInputs(plan, lookup).free) {
    const isSecret = (f: FreeInput['feeds'][number]) => Boolean(lookup(f.workflow_type)?.secret_fields.includes(f.field));
    const secret = input.feeds.find(isSecret);
    // A route step's field is not known to be secret: its type is named only when the run gets there.
    for (const f of input.feeds) {
      if (!secret || isSecret(f)) continue;
      problems.push({
        field: at(f.step, f.field),
        rule: 'secret_input',
        message: `step ${f.step}: input ${name} also feeds ${secret.step}.${secret.field}, a secret; an input feeding a secret field may feed only secret fields, or ${f.field} would show and send it in clear`,
      });
    }
    const typed = input.feeds
      .map((f) => ({ ...f, def: lookup(f.workflow_type) }))
      .filter((f): f is typeof f & { def: WorkflowDefinition } => f.def !== undefined)
      .map((f) => ({ ...f, types: typesOf(jsonFields(f.def).input[f.field]) }));
    for (const f of typed.slice(1)) {
      if (compatible(typed[0].types, f.types) && compatible(f.types, typed[0].types)) continue;
      problems.push({
        field: at(f.step, f.field),
        rule: 'type_mismatch',
        message: `step ${f.step}: input ${name} also feeds ${typed[0].step}.${typed[0].field} (${describe(typed[0].types)}); ${f.field} takes ${describe(f.types)}`,
      });
    }
  }
  return problems;
}
