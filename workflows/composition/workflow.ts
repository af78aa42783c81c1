import { ApplicationFailure, patched } from '@temporalio/workflow';
import { z } from 'zod';
import { findDefinition } from '../registry';
import { dagPlanSchema } from '../runtime/dag-plan';
import type { RunData } from '../runtime/definition';
import { runDefinition } from '../runtime/engine';
import { COMPOSED_WORKFLOW } from '../constants';
import { compositionDefinition, type ComposedRunInput } from './definition';
import { planInputs, unmetRequirements, type DefinitionLookup } from './plan';

/**
 * A composed input requires what its steps' types require beyond single fields (base_url or
 * connection_uuid); runs recorded before passed validation without it, and failed in the step.
 */
const PATCH_STEP_REQUIREMENTS = 'composition-step-requirements';

const compositionSchema = z.object({
  composition_uuid: z.uuid(),
  version: z.int().min(1),
  name: z.string(),
  exposed_to_end_users: z.boolean(),
  plan: dagPlanSchema,
});

/**
 * Every composed run: the Dag of the composition version its input carries, run by the engine
 * like any definition, its steps' types found with `lookup`. An input without a well-formed
 * version (a direct start) fails at once, before the definition is built: a definition that
 * cannot be built would fail every workflow task.
 */
export function makeComposedWorkflow(lookup: DefinitionLookup) {
  const workflow = async (input: ComposedRunInput): Promise<RunData> => {
    const parsed = compositionSchema.safeParse(input?.composition);
    if (!parsed.success) throw ApplicationFailure.nonRetryable(`composition: ${z.prettifyError(parsed.error)}`, 'invalid_input');
    let def;
    try {
      // Asked only of an input the requirements refuse, so that other runs record no marker. A resumed run is not validated again.
      const lenient =
        !input.resume && unmetRequirements(planInputs(parsed.data.plan, lookup).requirements, input.initial_data).length > 0 && !patched(PATCH_STEP_REQUIREMENTS);
      def = compositionDefinition(parsed.data, lookup, !lenient);
    } catch (err) {
      throw ApplicationFailure.nonRetryable(`composition: ${(err as Error).message}`, 'invalid_input');
    }
    return runDefinition(def, input);
  };
  Object.defineProperty(workflow, 'name', { value: COMPOSED_WORKFLOW });
  return workflow;
}

/** The worker's: steps run the built-in types. */
export const composedWorkflow = makeComposedWorkflow(findDefinition);
