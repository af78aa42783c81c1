import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { definitions, findDefinition } from '../../workflows/registry';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';
import type { ConnectionStore } from '../../activities/connections';
import { isEndUser, type Principal } from '../auth/principal';
import { notFound } from '../common/api-error';
import { CONNECTIONS } from '../common/di';
import { findPlugin } from '../plugins/plugins';

/** The REST surface shows state names in upper case (PENDING, COMPLETED, …). */
export const restStateName = (state: string) => (state === '*' ? '*' : state.toUpperCase());

export function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
}

/** Everything the catalog says is derived from the definitions in workflows/. */
@Injectable()
export class CatalogService {
  private readonly schemas = new Map<string, { input_schema: unknown; output_schema: unknown }>();

  constructor(@Inject(CONNECTIONS) private readonly connections: ConnectionStore) {}

  listTypes(prefix?: string, principal?: Principal) {
    const matching = definitions.filter(
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

  /** A type an end user is not exposed to is not in their catalog: 404 like an unknown one. */
  require(workflowType: string, principal?: Principal): WorkflowDefinition {
    const def = findDefinition(workflowType);
    if (!def || (isEndUser(principal) && !def.exposed_to_end_users)) throw notFound(`workflow type ${workflowType}`);
    return def;
  }

  getDefinition(workflowType: string, principal?: Principal) {
    const d = this.require(workflowType, principal);
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
    };
  }

  getSchema(workflowType: string, principal?: Principal) {
    const d = this.require(workflowType, principal);
    let cached = this.schemas.get(workflowType);
    if (!cached) {
      cached = { input_schema: jsonSchema(d.input, 'input'), output_schema: jsonSchema(d.output, 'output') };
      this.schemas.set(workflowType, cached);
    }
    return { ...cached, has_prerequisites: d.prerequisites.length > 0 };
  }

  /** What must exist before a run of this type can succeed, and what the caller's organization already has. */
  async getPrerequisites(workflowType: string, organizationUuid: string) {
    const d = this.require(workflowType);
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
