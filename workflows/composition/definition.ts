import { dagOutput, defineDag } from '../runtime/dag';
import { COMPOSED_WORKFLOW } from '../constants';
import type { EngineWorkflowInput } from '../runtime/contract';
import type { Prerequisite, WorkflowDefinition } from '../runtime/definition';
import { compositionFieldRoles, compositionInputSchema, composedType, type DefinitionLookup, type Plan } from './plan';

export interface CompositionVersion {
  composition_uuid: string;
  version: number;
  name: string;
  exposed_to_end_users: boolean;
  plan: Plan;
}


export interface ComposedRunInput extends EngineWorkflowInput {
  composition: CompositionVersion;
}

export type ComposedDefinition = WorkflowDefinition & { composition: CompositionVersion };

/**
 * A composed type as the engine sees it: a Dag derived from its plan and the built-in types.
 * `stepRequirements`: see compositionInputSchema.
 */
export function compositionDefinition(version: CompositionVersion, lookup: DefinitionLookup, stepRequirements = true): ComposedDefinition {
  const { input, freeOnly, free } = compositionInputSchema(version.plan, lookup, stepRequirements);
  const { connection_url_fields, ...roles } = compositionFieldRoles(free, lookup);
  const def = defineDag({
    workflow_type: composedType(version.composition_uuid, version.version),
    // <major>.<minor> as a built-in type's: the composition's version is the major, and never changes once made.
    version: `${version.version}.0`,
    description: version.name,
    input,
    output: dagOutput(version.plan, freeOnly.partial().shape),
    plan: version.plan,
    exposed_to_end_users: version.exposed_to_end_users,
    ...roles,
    resolveDefinition: lookup,
  });
  return { ...def, prerequisites: stepPrerequisites(version.plan, lookup), connection_url_fields, composition: version };
}

/** What the steps' types need (a connection of their plugin), once per plugin. */
function stepPrerequisites(plan: Plan, lookup: DefinitionLookup) {
  const byPlugin = new Map<string, Prerequisite>();
  for (const layer of plan.layers) {
    for (const p of lookup(layer.workflow_type)?.prerequisites ?? []) if (!byPlugin.has(p.plugin)) byPlugin.set(p.plugin, p);
  }
  return [...byPlugin.values()];
}

/** The Temporal workflow type and argument that run a definition: a composed one under COMPOSED_WORKFLOW, with its version. */
export function temporalStart(def: WorkflowDefinition, input: EngineWorkflowInput): { workflowType: string; args: [EngineWorkflowInput] } {
  const composition = (def as Partial<ComposedDefinition>).composition;
  if (!composition) return { workflowType: def.workflow_type, args: [input] };
  const composed: ComposedRunInput = { ...input, composition };
  return { workflowType: COMPOSED_WORKFLOW, args: [composed] };
}
