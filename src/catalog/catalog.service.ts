import { Inject, Injectable } from '@nestjs/common';
import { allDefinitions, findDefinition } from '../../workflows/registry';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';
import { CHILD_RETRY } from '../../workflows/runtime/dag';
import { childWorkflowId, type DagPlan, runningState } from '../../workflows/runtime/dag-plan';
import type { ConnectionStore } from '../../activities/connections';
import { isEndUser, type Principal } from '../auth/principal';
import { notFound } from '../common/api-error';
import { CONNECTIONS } from '../common/di';
import { jsonSchema } from './json-schema';
import { CompositionsService } from '../compositions/compositions.service';
import { findPlugin } from '../plugins/plugins';

/** The REST surface shows state names in upper case (PENDING, COMPLETED, …). */
export const restStateName = (state: string) => (state === '*' ? '*' : state.toUpperCase());

export { jsonSchema } from './json-schema';

/** A Dag type's layers, each with the parent state it runs in and its child's workflow id. */
function dagView(plan: DagPlan) {
  return {
    layers: plan.layers.map((l, index) => ({
      index,
      layer: l.layer,
      step: l.step,
      workflow_type: l.workflow_type,
      state: restStateName(runningState(l.step)),
      child_workflow_id: childWorkflowId('{workflow_id}', l.step),
      inputs: l.inputs,
      compensation: l.compensation ?? null,
    })),
    child_retry: CHILD_RETRY,
  };
}

/**
 * Everything the catalog says is derived from the definitions in workflows/, and, for an
 * organization, from its composed types (virtual.<uuid>@N), which only that organization sees.
 */
@Injectable()
export class CatalogService {
  private readonly schemas = new Map<string, { input_schema: unknown; output_schema: unknown }>();

  constructor(
    @Inject(CONNECTIONS) private readonly connections: ConnectionStore,
    private readonly compositions: CompositionsService,
  ) {}

  /** The built-in types and the organization's composed types; an end user sees only those exposed to end users. */
  async listTypesFor(principal: Principal, prefix?: string) {
    return this.listTypes(prefix, await this.compositions.listTypes(principal.organization_uuid), principal);
  }

  /** A built-in type, or one of the organization's composed types; anything else (another organization's) is a 404. */
  async resolve(workflowType: string, organizationUuid: string): Promise<WorkflowDefinition> {
    const def = findDefinition(workflowType) ?? (await this.compositions.findDefinition(organizationUuid, workflowType));
    if (!def) throw notFound(`workflow type ${workflowType}`);
    return def;
  }

  /** As resolve, and a type an end user is not exposed to is not in their catalog: 404 like an unknown one. */
  async resolveFor(workflowType: string, principal: Principal): Promise<WorkflowDefinition> {
    const def = await this.resolve(workflowType, principal.organization_uuid);
    if (isEndUser(principal) && !def.exposed_to_end_users) throw notFound(`workflow type ${workflowType}`);
    return def;
  }

  listTypes(prefix?: string, composed: readonly WorkflowDefinition[] = [], principal?: Principal) {
    const matching = [...allDefinitions(), ...composed].filter(
      (d) => (!prefix || d.workflow_type.startsWith(prefix)) && (!isEndUser(principal) || d.exposed_to_end_users),
    );
    const counts = new Map<string, number>();
    for (const d of matching) {
      const ns = d.workflow_type.split('.')[0];
      counts.set(ns, (counts.get(ns) ?? 0) + 1);
    }
    return {
      types: matching.map((d) => ({
        workflow_type: d.workflow_type,
        version: d.version,
        kind: d.kind,
        description: d.description,
        has_prerequisites: d.prerequisites.length > 0,
      })),
      namespaces: [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => ({ name, count })),
    };
  }

  /** A built-in type (no organization's composed types). */
  require(workflowType: string): WorkflowDefinition {
    const def = findDefinition(workflowType);
    if (!def) throw notFound(`workflow type ${workflowType}`);
    return def;
  }

  getDefinition(workflowType: string) {
    return this.describe(this.require(workflowType));
  }

  describe(d: WorkflowDefinition) {
    return {
      workflow_type: d.workflow_type,
      version: d.version,
      kind: d.kind,
      description: d.description,
      states: Object.entries(d.states).map(([name, s]) => ({
        name: restStateName(name),
        initial: Boolean(s.initial),
        terminal: Boolean(s.terminal),
        success: Boolean(s.success),
        auto_advance: s.auto_advance ?? null,
      })),
      transitions: d.transitions.map((t) => ({ from: restStateName(t.from), action: t.action, to: restStateName(t.to) })),
      exposed_to_end_users: d.exposed_to_end_users,
      has_prerequisites: d.prerequisites.length > 0,
      ...(d.plan && dagView(d.plan)),
    };
  }

  getSchema(workflowType: string) {
    return this.schemaOf(this.require(workflowType));
  }

  /** A composed type's input schema holds its free inputs only. */
  schemaOf(d: WorkflowDefinition) {
    let cached = this.schemas.get(d.workflow_type);
    if (!cached) {
      const input_schema = this.compositions?.inputSchema(d.workflow_type) ?? jsonSchema(d.input, 'input');
      cached = { input_schema, output_schema: jsonSchema(d.output, 'output') };
      this.schemas.set(d.workflow_type, cached);
    }
    return { ...cached, has_prerequisites: d.prerequisites.length > 0 };
  }

  /** What must exist before a run of this type can succeed, and what the caller's organization already has. */
  async getPrerequisites(workflowType: string, organizationUuid: string) {
    const d = await this.resolve(workflowType, organizationUuid);
    const required = await Promise.all(
      d.prerequisites.map(async (p) => ({
        plugin: p.plugin,
        fields: findPlugin(p.plugin)?.fields ?? [],
        connections: (await this.connections.list(organizationUuid, p.plugin)).map((c) => c.connectionUuid),
      })),
    );
    const steps = d.prerequisites.flatMap((p, i) =>
      required[i].connections.length
        ? [`${p.description}: done (${required[i].connections.length} ${p.plugin} connection(s)); pass one as connection_uuid`]
        : [
            `${p.description}: create one with POST /api/connections {"plugin": "${p.plugin}", "name": "...", "secrets": {${required[i].fields
              .filter((f) => !f.endsWith('?'))
              .map((f) => `"${f}": "..."`)
              .join(', ')}}}`,
            'Pass the returned connection_uuid in initial_data',
          ],
    );
    return { workflow_type: d.workflow_type, satisfied: required.every((r) => r.connections.length > 0), required, steps };
  }
}
