import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { WorkflowIdReusePolicy } from '@temporalio/common';
import type { EngineWorkflowInput, ProjectionActivities, RunOwner } from '../../workflows/runtime/contract';
import { temporalStart } from '../../workflows/composition/definition';
import { initialState, type RunData, type WorkflowDefinition } from '../../workflows/runtime/definition';
import { isDatabaseUnavailable } from '../common/unavailable';
import type { TemporalClients } from '../temporal-clients';
import { engineStartOptions } from './start-options';

export interface Launch {
  def: WorkflowDefinition;
  organizationUuid: string;
  workflowId: string;
  initialData: RunData;
  owner?: RunOwner;
  workflowIdReusePolicy?: WorkflowIdReusePolicy;
}

/**
 * Starts the execution, then registers the run so that it is readable the moment the caller
 * answers. Registered only once Temporal has the run: the row never shows a run that did not
 * start, and a request repeating an Idempotency-Key can take the row as proof that the run
 * started. The workflow's own projectRunStarted writes the same row idempotently, in either order:
 * both name the execution Temporal started. False when an execution with this id had been started
 * already (the same run, registered too): that registration names no execution, and changes a row
 * already there in nothing.
 */
export async function launchRun(temporal: TemporalClients, projection: Pick<ProjectionActivities, 'projectRunStarted'>, run: Launch): Promise<boolean> {
  const { def, organizationUuid: org, workflowId, owner } = run;
  const state = initialState(def);
  const input: EngineWorkflowInput = { organization_uuid: org, initial_data: run.initialData };
  let started = true;
  let firstExecutionRunId: string | undefined;
  try {
    const { workflowType, args } = temporalStart(def, input);
    ({ firstExecutionRunId } = await temporal.forOrganization(org).workflow.start(workflowType, {
      ...engineStartOptions(def, org, state, { owner }),
      workflowId,
      args,
      ...(run.workflowIdReusePolicy ? { workflowIdReusePolicy: run.workflowIdReusePolicy } : {}),
    }));
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    started = false;
  }
  try {
    await projection.projectRunStarted({
      workflow_id: workflowId,
      organization_uuid: org,
      workflow_type: def.workflow_type,
      version: def.version,
      state_name: state,
      attempt: 1,
      at: new Date().toISOString(),
      owner,
      first_execution_run_id: firstExecutionRunId,
    });
  } catch (err) {
    // The database went away after the caller's check: the run is started, and its workflow
    // projects it once the database answers. Saying so is the truth; a 503 would invite a duplicate start.
    if (!isDatabaseUnavailable(err)) throw err;
  }
  return started;
}
