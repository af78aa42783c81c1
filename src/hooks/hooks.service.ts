import { Inject, Injectable } from '@nestjs/common';
import type { ConnectionStore } from '../../activities/connections';
import { createEndpoint } from '../../activities/hooks/endpoints';
import { SECRET_REF_RULE } from '../../activities/hooks/secret-ref';
import { ACKNOWLEDGE_REFUSALS, endpointView, eventView, type HookEndpointRow, type HookStore, newSigningSecret } from '../../activities/hooks/store';
import { targetUrlProblem } from '../../activities/hooks/target';
import type { Principal } from '../auth/principal';
import { ApiError, notFound, validationFailed } from '../common/api-error';
import { CONFIG, CONNECTIONS, HOOKS } from '../common/di';
import type { AppConfig } from '../config';
import { RunsService } from '../runs/runs.service';
import type { CreateEndpointBody } from './hooks.schemas';
import { canonicalUuid } from '../common/uuid';

export const REPLAY_TYPE = 'hook.replay-event';

/** The org-scoped side of webhook redirects; another organization's endpoint or event is reported as missing. */
@Injectable()
export class HooksService {
  constructor(
    @Inject(HOOKS) private readonly store: HookStore,
    @Inject(CONNECTIONS) private readonly connections: ConnectionStore,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly runs: RunsService,
  ) {}

  private view(row: HookEndpointRow) {
    return endpointView(row, this.config.publicApiUrl);
  }

  async create(principal: Principal, body: CreateEndpointBody) {
    const org = principal.organization_uuid;
    const problem = targetUrlProblem(body.target_url, this.config);
    if (problem) throw validationFailed([{ field: 'target_url', rule: 'outbound_policy', message: problem }]);
    const created = await createEndpoint({ hooks: this.store, connections: this.connections }, org, body);
    if (!('row' in created) && created.refused === 'secret_ref_not_found') {
      throw validationFailed([{ field: 'secret_ref', rule: 'not_found', message: "names no webhook signing secret of this organization's connections" }]);
    }
    if (!('row' in created) && created.refused === 'secret_ref_not_allowed') {
      throw validationFailed([{ field: 'secret_ref', rule: 'webhook_secret_only', message: SECRET_REF_RULE }]);
    }
    if (!('row' in created)) throw new ApiError(409, 'endpoint_name_taken', `an endpoint named "${body.name}" already exists`);
    // The only time a generated secret is shown; a referenced one is the caller's own connection secret.
    return { ...this.view(created.row), ...(created.generatedSecret ? { signing_secret: created.generatedSecret } : {}) };
  }

  async list(principal: Principal) {
    return { endpoints: (await this.store.listEndpoints(principal.organization_uuid)).map((r) => this.view(r)) };
  }

  private async requireEndpoint(principal: Principal, endpointUuid: string) {
    const id = canonicalUuid(endpointUuid);
    const row = id ? await this.store.endpoint(principal.organization_uuid, id) : undefined;
    if (!row) throw notFound(`endpoint ${endpointUuid}`);
    return row;
  }

  private async requireEvent(principal: Principal, eventUuid: string) {
    const id = canonicalUuid(eventUuid);
    const row = id ? await this.store.event(principal.organization_uuid, id) : undefined;
    if (!row) throw notFound(`event ${eventUuid}`);
    return row;
  }

  async get(principal: Principal, endpointUuid: string) {
    return this.view(await this.requireEndpoint(principal, endpointUuid));
  }

  async remove(principal: Principal, endpointUuid: string) {
    const row = await this.requireEndpoint(principal, endpointUuid);
    await this.store.deleteEndpoint(principal.organization_uuid, row.endpointUuid);
  }

  async rotateSecret(principal: Principal, endpointUuid: string) {
    const row = await this.requireEndpoint(principal, endpointUuid);
    const secret = newSigningSecret();
    return { ...this.view(await this.store.rotateSecret(row, secret)), signing_secret: secret };
  }

  async events(principal: Principal, endpointUuid: string, limit: number) {
    const row = await this.requireEndpoint(principal, endpointUuid);
    return { events: (await this.store.listEvents(principal.organization_uuid, row.endpointUuid, limit)).map(eventView) };
  }

  async event(principal: Principal, eventUuid: string) {
    return eventView(await this.requireEvent(principal, eventUuid));
  }

  /** Delivery runs as a hook.replay-event run of the event's organization, like the ingress's own. */
  async replay(principal: Principal, eventUuid: string) {
    const row = await this.requireEvent(principal, eventUuid);
    if (row.state === 'expired') throw new ApiError(409, 'event_expired', `event ${row.eventUuid} has expired and cannot be replayed`);
    const { result } = await this.runs.start(principal, { workflow_type: REPLAY_TYPE, initial_data: { event_uuid: row.eventUuid } });
    return { event_uuid: row.eventUuid, workflow_id: result.workflow_id };
  }

  async acknowledge(principal: Principal, eventUuid: string) {
    const row = await this.requireEvent(principal, eventUuid);
    const outcome = await this.store.acknowledge(principal.organization_uuid, row.eventUuid);
    if ('row' in outcome) return eventView(outcome.row);
    if (outcome.refused === 'event_not_found') throw notFound(`event ${eventUuid}`);
    throw new ApiError(409, outcome.refused, ACKNOWLEDGE_REFUSALS[outcome.refused](row.eventUuid));
  }
}
