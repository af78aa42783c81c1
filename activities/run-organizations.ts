import type { SerializationContext } from '@temporalio/common';
import type { PayloadOwner } from './payload-codec';
import { workflowLineage } from '../workflows/runtime/dag-plan';

const MAX_WORKFLOW_IDS = 100_000;

/**
 * Which organization a run's payloads belong to, for the worker's codec, which
 * Temporal gives only a serialization context (namespace, workflow id).
 *
 * The SDK makes one context object per workflow run in a worker's cache, and the
 * first payload it decodes with it is the run's start input (the first job of the
 * first activation); likewise one object per activity task, whose first payloads
 * are the task's own. So the owner proved by the first payload decoded in a context
 * is the owner of everything encoded in it: results, failures, continue-as-new
 * input. Later payloads (a signal or query from someone else) never change it.
 * Contexts the SDK makes only to encode (activities being scheduled, heartbeats)
 * fall back to the last owner decided for their workflow id, and a child run's start
 * input (a Dag's layer, workflow id `<parent>.<step>`) to its parent's owner, the run
 * that starts it; a run whose owner is unknown gets platform payloads, which no
 * organization's token decodes.
 */
export class RunOrganizations {
  private readonly byContext = new WeakMap<SerializationContext, PayloadOwner>();
  private readonly byWorkflowId = new Map<string, PayloadOwner>();

  observe(context: SerializationContext | undefined, owner: PayloadOwner): void {
    if (!context || this.byContext.has(context)) return;
    this.byContext.set(context, owner);
    if (!context.workflowId) return;
    this.byWorkflowId.delete(context.workflowId);
    if (this.byWorkflowId.size >= MAX_WORKFLOW_IDS) this.byWorkflowId.delete(this.byWorkflowId.keys().next().value!);
    this.byWorkflowId.set(context.workflowId, owner);
  }

  ownerFor(context: SerializationContext | undefined): PayloadOwner {
    if (!context) return null;
    if (this.byContext.has(context)) return this.byContext.get(context)!;
    return (context.workflowId && this.ownerOfWorkflow(context.workflowId)) || null;
  }

  private ownerOfWorkflow(workflowId: string): PayloadOwner | undefined {
    for (const id of workflowLineage(workflowId).reverse()) {
      const owner = this.byWorkflowId.get(id);
      if (owner !== undefined) return owner;
    }
    return undefined;
  }
}
