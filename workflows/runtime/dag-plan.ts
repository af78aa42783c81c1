import { z } from 'zod';
import type { RunData } from './definition';

/**
 * A Dag's plan is plain JSON, so a plan stored in the database (a composition) runs on the
 * same runtime as one declared in a definition file. Parse stored plans with `dagPlanSchema`.
 */

/** Where one input field of a layer's child comes from. */
export const inputMappingSchema = z.union([
  z.strictObject({ from: z.literal('input'), name: z.string().min(1) }),
  z.strictObject({ from: z.literal('step'), step: z.string().min(1), field: z.string().min(1) }),
  z.strictObject({ const: z.unknown() }),
]);
export type InputMapping = z.output<typeof inputMappingSchema>;

const inputMappings = z.record(z.string(), inputMappingSchema);

/** The workflow_type of a layer that runs the type named by the nearest earlier step's `route_workflow_type` output. */
export const ROUTE = 'route';

const STEP_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export const dagLayerSchema = z.strictObject({
  layer: z.string().min(1).max(100),
  step: z.string().regex(STEP_NAME, 'lower-case letters, digits and _, starting with a letter, at most 63'),
  workflow_type: z.string().min(1).max(200),
  inputs: inputMappings,
  compensation: z.strictObject({ workflow_type: z.string().min(1).max(200), inputs: inputMappings }).optional(),
});
export type DagLayer = z.output<typeof dagLayerSchema>;

export const dagPlanSchema = z
  .strictObject({
    layers: z
      .array(dagLayerSchema)
      .min(1)
      .refine((layers) => new Set(layers.map((l) => l.step)).size === layers.length, 'step names must be unique'),
  })
  .superRefine((plan, ctx) => {
    for (const problem of orderProblems(plan.layers)) ctx.addIssue({ code: 'custom', message: problem.message, path: ['layers', ...problem.path] });
  });
export type DagPlan = z.output<typeof dagPlanSchema>;

/** A layer reads only the steps before it (its compensation its own step too); a route layer needs an earlier step to route it. */
function orderProblems(layers: ReadonlyArray<z.output<typeof dagLayerSchema>>) {
  const problems: Array<{ message: string; path: Array<string | number> }> = [];
  layers.forEach((layer, index) => {
    if (layer.workflow_type === ROUTE && index === 0) problems.push({ message: 'a route layer cannot be the first', path: [index, 'workflow_type'] });
    const earlier = layers.slice(0, index).map((l) => l.step);
    const check = (mappings: Record<string, InputMapping>, readable: string[], path: Array<string | number>) => {
      for (const [field, mapping] of Object.entries(mappings)) {
        if ('from' in mapping && mapping.from === 'step' && !readable.includes(mapping.step)) {
          problems.push({ message: `reads step ${mapping.step}, which has not run by then`, path: [...path, field] });
        }
      }
    };
    check(layer.inputs, earlier, [index, 'inputs']);
    if (layer.compensation) check(layer.compensation.inputs, [...earlier, layer.step], [index, 'compensation', 'inputs']);
  });
  return problems;
}

/** The route output a `route` layer reads. */
export const ROUTE_OUTPUT = 'route_workflow_type';

/** One layer's child id: stable across replays and retries of the parent. */
export const childWorkflowId = (parentWorkflowId: string, step: string) => `${parentWorkflowId}.${step}`;

/** A run and the Dags above it, by the ids childWorkflowId gives their layers: the outermost first, the run itself last. */
export function workflowLineage(workflowId: string): string[] {
  const parts = workflowId.split('.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('.'));
}

/** Whether `workflowId` is `ancestor` or a layer (at any depth) of the Dag `ancestor`. */
export const isWithinRun = (ancestor: string, workflowId: string) => workflowId === ancestor || workflowId.startsWith(`${ancestor}.`);
export const compensationWorkflowId = (parentWorkflowId: string, step: string) => `${parentWorkflowId}.${step}.compensation`;

/** The parent state while a layer's child runs. */
export const runningState = (step: string) => `running_${step}`;

/** A mapping's value from the parent's data; undefined leaves the child's field to its default. */
export function mappedValue(mapping: InputMapping, data: RunData): unknown {
  if ('const' in mapping) return mapping.const;
  if (mapping.from === 'input') return data[mapping.name];
  const output = data[mapping.step];
  return output && typeof output === 'object' ? (output as RunData)[mapping.field] : undefined;
}

export function mappedInputs(mappings: Record<string, InputMapping>, data: RunData): RunData {
  const built: RunData = {};
  for (const [field, mapping] of Object.entries(mappings)) {
    const value = mappedValue(mapping, data);
    if (value !== undefined) built[field] = value;
  }
  return built;
}

/**
 * The type a route layer runs: the nearest earlier step with a `route_workflow_type` output
 * names it (null: the layer is skipped). Undefined when no earlier step routes.
 */
export function routeOf(plan: DagPlan, index: number, data: RunData): { type: string | null; from: string } | undefined {
  for (let j = index - 1; j >= 0; j--) {
    const step = plan.layers[j].step;
    const output = data[step];
    if (output && typeof output === 'object' && ROUTE_OUTPUT in output) {
      const named = (output as RunData)[ROUTE_OUTPUT];
      return { type: typeof named === 'string' && named ? named : null, from: step };
    }
  }
  return undefined;
}
