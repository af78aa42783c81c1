import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import type { ConnectionStore } from '../../activities/connections';
import type { DatabaseHandle } from '../../db/client';
import { compositions, compositionVersions } from '../../db/schema';
import { compositionDefinition, type CompositionVersion } from '../../workflows/composition/definition';
import { composedType, compositionInputSchema, parseComposedType, type Plan } from '../../workflows/composition/plan';
import { findDefinition } from '../../workflows/registry';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';
import type { Principal } from '../auth/principal';
import { jsonSchema } from '../catalog/json-schema';
import { notFound, validationFailed } from '../common/api-error';
import { CONFIG, CONNECTIONS, DATABASE } from '../common/di';
import type { AppConfig } from '../config';
import { StartChecks } from '../runs/start-checks';
import { compileComposition, constantDestinationProblems } from './compile';
import type { CompositionBody } from './composition-body';
import { canonicalUuid } from '../common/uuid';

type VersionRow = typeof compositionVersions.$inferSelect;

/**
 * An organization's composed workflow types. Steps are checked against the built-in types when a
 * version is created, and a version never changes afterwards: its definition is cached for good.
 */
@Injectable()
export class CompositionsService {
  private readonly definitions = new Map<string, { organization: string; definition: WorkflowDefinition; input_schema: unknown }>();
  private readonly startChecks: StartChecks;

  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    @Inject(CONFIG) config: AppConfig,
    @Inject(CONNECTIONS) connections: ConnectionStore,
  ) {
    this.startChecks = new StartChecks(config, connections);
  }

  private get db() {
    return this.database.db;
  }

  async create(principal: Principal, body: CompositionBody) {
    const plan = await this.compile(principal, body);
    const compositionUuid = randomUUID();
    await this.db.transaction(async (tx) => {
      await tx.insert(compositions).values({ compositionUuid, organizationUuid: principal.organization_uuid, latestVersion: 1 });
      await tx.insert(compositionVersions).values(this.versionValues(compositionUuid, 1, body, plan));
    });
    return this.created(principal.organization_uuid, compositionUuid, 1);
  }

  /** The next version; runs of earlier versions keep theirs, and every version stays startable. */
  async update(principal: Principal, uuidParam: string, body: CompositionBody) {
    const { compositionUuid } = await this.requireComposition(principal, uuidParam);
    const plan = await this.compile(principal, body);
    const version = await this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(compositions)
        .set({ latestVersion: sql`${compositions.latestVersion} + 1`, updatedAt: new Date() })
        .where(and(eq(compositions.compositionUuid, compositionUuid), eq(compositions.organizationUuid, principal.organization_uuid)))
        .returning();
      await tx.insert(compositionVersions).values(this.versionValues(compositionUuid, row.latestVersion, body, plan));
      return row.latestVersion;
    });
    return this.created(principal.organization_uuid, compositionUuid, version);
  }

  async list(principal: Principal) {
    const rows = await this.db
      .select()
      .from(compositions)
      .innerJoin(
        compositionVersions,
        and(eq(compositionVersions.compositionUuid, compositions.compositionUuid), eq(compositionVersions.version, compositions.latestVersion)),
      )
      .where(eq(compositions.organizationUuid, principal.organization_uuid))
      .orderBy(desc(compositions.createdAt), desc(compositions.compositionUuid));
    return {
      compositions: rows.map((r) => this.view(principal.organization_uuid, r.composition_versions, r.compositions.createdAt, r.compositions.updatedAt)),
    };
  }

  async get(principal: Principal, uuidParam: string) {
    const composition = await this.requireComposition(principal, uuidParam);
    const { compositionUuid } = composition;
    const versions = await this.db
      .select()
      .from(compositionVersions)
      .where(eq(compositionVersions.compositionUuid, compositionUuid))
      .orderBy(desc(compositionVersions.version));
    return {
      ...this.view(principal.organization_uuid, versions[0], composition.createdAt, composition.updatedAt),
      versions: versions.map((v) => ({ version: v.version, workflow_type: composedType(compositionUuid, v.version), created_at: v.createdAt.toISOString() })),
    };
  }

  /**
   * Every startable composed type of the organization (each version of each composition). Lists
   * read the versions' keys; a plan is read only for a version this process has not compiled yet.
   */
  async listTypes(organizationUuid: string): Promise<WorkflowDefinition[]> {
    const keys = await this.db
      .select({ compositionUuid: compositionVersions.compositionUuid, version: compositionVersions.version })
      .from(compositionVersions)
      .innerJoin(compositions, eq(compositions.compositionUuid, compositionVersions.compositionUuid))
      .where(eq(compositions.organizationUuid, organizationUuid))
      .orderBy(desc(compositions.createdAt), desc(compositionVersions.compositionUuid), desc(compositionVersions.version));
    const typeOf = (k: { compositionUuid: string; version: number }) => composedType(k.compositionUuid, k.version);
    const uncached = keys.filter((k) => !this.definitions.has(typeOf(k)));
    if (uncached.length) {
      const rows = await this.db
        .select()
        .from(compositionVersions)
        .where(inArray(compositionVersions.compositionUuid, [...new Set(uncached.map((k) => k.compositionUuid))]));
      for (const row of rows) this.definitionOf(organizationUuid, row);
    }
    return keys.flatMap((k) => this.definitions.get(typeOf(k))?.definition ?? []);
  }

  /** The definition of `virtual.<uuid>@N` for this organization; undefined for another organization's or an unknown one. */
  async findDefinition(organizationUuid: string, workflowType: string): Promise<WorkflowDefinition | undefined> {
    const cached = this.definitions.get(workflowType);
    if (cached) return cached.organization === organizationUuid ? cached.definition : undefined;
    const parsed = parseComposedType(workflowType);
    if (!parsed) return undefined;
    const [row] = await this.db
      .select({ version: compositionVersions })
      .from(compositionVersions)
      .innerJoin(compositions, eq(compositions.compositionUuid, compositionVersions.compositionUuid))
      .where(
        and(
          eq(compositionVersions.compositionUuid, parsed.composition_uuid),
          eq(compositionVersions.version, parsed.version),
          eq(compositions.organizationUuid, organizationUuid),
        ),
      );
    return row ? this.definitionOf(organizationUuid, row.version) : undefined;
  }

  /** A step's constants are checked as a start of its type checks its input, for the organization composing it. */
  private async compile(principal: Principal, body: CompositionBody): Promise<Plan> {
    const org = principal.organization_uuid;
    const compiled = compileComposition(body.steps, findDefinition, body.exposed_to_end_users, { organization_uuid: org, checks: this.startChecks });
    const problems = [...('problems' in compiled ? compiled.problems : []), ...(await constantDestinationProblems(body.steps, findDefinition, org, this.startChecks))];
    if ('problems' in compiled || problems.length) throw validationFailed(problems);
    return compiled.plan;
  }

  private versionValues(compositionUuid: string, version: number, body: CompositionBody, plan: Plan) {
    return { compositionUuid, version, name: body.name, steps: body.steps, plan, exposedToEndUsers: body.exposed_to_end_users };
  }

  private async created(organizationUuid: string, compositionUuid: string, version: number) {
    const workflowType = composedType(compositionUuid, version);
    await this.findDefinition(organizationUuid, workflowType);
    return { composition_uuid: compositionUuid, version, workflow_type: workflowType, input_schema: this.inputSchema(workflowType) };
  }

  /** Another organization's composition is reported exactly like a missing one. */
  private async requireComposition(principal: Principal, compositionUuid: string) {
    const id = canonicalUuid(compositionUuid);
    const [row] = id
      ? await this.db
          .select()
          .from(compositions)
          .where(and(eq(compositions.compositionUuid, id), eq(compositions.organizationUuid, principal.organization_uuid)))
      : [];
    if (!row) throw notFound(`composition ${compositionUuid}`);
    return row;
  }

  private definitionOf(organizationUuid: string, row: VersionRow): WorkflowDefinition {
    const workflowType = composedType(row.compositionUuid, row.version);
    const cached = this.definitions.get(workflowType);
    if (cached) return cached.definition;
    const version = versionOf(row);
    const definition = compositionDefinition(version, findDefinition);
    // Only the free inputs: a field the composition binds itself is no input.
    const input_schema = jsonSchema(compositionInputSchema(version.plan, findDefinition).freeOnly, 'input');
    this.definitions.set(workflowType, { organization: organizationUuid, definition, input_schema });
    return definition;
  }

  /** The JSON Schema of a composed type's free inputs (the type's definition must have been looked up). */
  inputSchema(workflowType: string): unknown {
    return this.definitions.get(workflowType)?.input_schema;
  }

  private view(organizationUuid: string, row: VersionRow, createdAt: Date, updatedAt: Date) {
    const def = this.definitionOf(organizationUuid, row);
    return {
      composition_uuid: row.compositionUuid,
      name: row.name,
      version: row.version,
      workflow_type: def.workflow_type,
      exposed_to_end_users: row.exposedToEndUsers,
      steps: row.steps,
      input_schema: this.inputSchema(def.workflow_type),
      created_at: createdAt.toISOString(),
      updated_at: updatedAt.toISOString(),
    };
  }
}

function versionOf(row: VersionRow): CompositionVersion {
  return {
    composition_uuid: row.compositionUuid,
    version: row.version,
    name: row.name,
    exposed_to_end_users: row.exposedToEndUsers,
    plan: row.plan as Plan,
  };
}
