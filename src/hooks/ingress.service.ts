import { Inject, Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import type { HookStore } from '../../activities/hooks/store';
import { findUnstorableText } from '../../workflows/runtime/storable-text';
import type { Principal } from '../auth/principal';
import { ApiError, notFound, validationFailed } from '../common/api-error';
import { HOOKS, LOGGER } from '../common/di';
import { loggableError } from '../common/loggable-error';
import type { Logger } from '../logger';
import { RunsService } from '../runs/runs.service';
import { REPLAY_TYPE } from './hooks.service';
import { canonicalUuid } from '../common/uuid';
import { keptHeaders } from './kept-headers';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Starts the event's delivery as its organization would: the run shows in that organization's list. */
const ingressPrincipal = (organizationUuid: string): Principal => ({
  user_id: 'hook-ingress',
  organization_uuid: organizationUuid,
  username: 'hook-ingress',
  token_type: 'org_member',
  principal_type: 'api_token',
});

@Injectable()
export class IngressService {
  constructor(
    @Inject(HOOKS) private readonly store: HookStore,
    @Inject(LOGGER) private readonly log: Logger,
    private readonly runs: RunsService,
  ) {}

  /**
   * A target_url that reaches an ingress of this service under another name (an IP address, an
   * alias) would feed every delivery back in as a new event, forever: a request carrying one of
   * our event ids as Webhook-Id is our own delivery, and is refused.
   */
  private async refuseOwnDelivery(webhookId: string | string[] | undefined) {
    const id = canonicalUuid(webhookId);
    if (!id || !(await this.store.eventExists(id))) return;
    throw new ApiError(508, 'loop_detected', 'this request is a delivery of this service: an endpoint may not forward to an ingress of this service');
  }

  /**
   * Stores the event and answers once the insert committed; its delivery run is started after, not
   * awaited, so a sender is never held by Temporal. A delivery that could not be started (Temporal
   * down, the process gone) leaves the event pending, to be replayed (POST …/replay).
   */
  async receive(endpointUuid: string, body: Buffer, headers: IncomingHttpHeaders): Promise<{ event_uuid: string }> {
    const id = canonicalUuid(endpointUuid);
    const endpoint = id ? await this.store.activeEndpoint(id) : undefined;
    if (!endpoint) throw notFound(`endpoint ${endpointUuid}`);
    await this.refuseOwnDelivery(headers['webhook-id']);
    let text: string;
    try {
      text = strictUtf8.decode(body);
    } catch {
      throw validationFailed([{ field: 'body', rule: 'utf8', message: 'must be UTF-8 text' }]);
    }
    const unstorable = findUnstorableText(text, ['body']);
    if (unstorable) throw validationFailed([unstorable]);
    const event = await this.store.insertEvent(endpoint, text, keptHeaders(headers));
    this.runs.start(ingressPrincipal(endpoint.organizationUuid), { workflow_type: REPLAY_TYPE, initial_data: { event_uuid: event.eventUuid } }).catch((err) => {
      const fields = { err: loggableError(err), event_uuid: event.eventUuid, organization_uuid: endpoint.organizationUuid };
      this.log.warn(fields, 'hook delivery not started; the event stays pending');
    });
    return { event_uuid: event.eventUuid };
  }
}
