import { Inject, Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { type HookEndpointRow, type HookStore, TEST_EVENT_MARK_HEADER } from '../../activities/hooks/store';
import { SignatureRefusal, verifySignature } from '../../activities/payments-signature';
import { findUnstorableText } from '../../workflows/runtime/storable-text';
import type { Principal } from '../auth/principal';
import { ApiError, notFound, validationFailed } from '../common/api-error';
import { CONFIG, HOOKS, LOGGER } from '../common/di';
import type { AppConfig } from '../config';
import { loggableError } from '../common/loggable-error';
import type { Logger } from '../logger';
import { RunsService } from '../runs/runs.service';
import { REPLAY_TYPE } from './hooks.service';
import { canonicalUuid } from '../common/uuid';
import { keptHeaders } from './kept-headers';
import { signatureRefused } from '../payments/signature-refused';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

const header = (headers: IncomingHttpHeaders, name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : undefined);

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
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly runs: RunsService,
  ) {}

  /**
   * An endpoint whose secret came from secret_ref signs deliveries with a secret the service also
   * verifies provider events with: re-signing whatever anyone posts would hand out provider
   * signatures. So it takes only events the provider signed with that same secret, checked as the
   * payments ingress checks them; re-signing such an event tells no one anything new.
   */
  private requireProviderSignature(endpoint: HookEndpointRow, body: Buffer, headers: IncomingHttpHeaders) {
    try {
      verifySignature({
        payload: body,
        header: header(headers, 'stripe-signature') ?? header(headers, 'webhook-signature'),
        secrets: [this.store.secretOf(endpoint)],
        toleranceSeconds: this.config.paymentsWebhookToleranceSeconds,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
    } catch (err) {
      if (!(err instanceof SignatureRefusal)) throw err;
      throw signatureRefused(err, "this endpoint's secret comes from secret_ref, so it takes only events signed with that secret");
    }
  }

  /** Whether hook.receive-webhook posted this; a mark that does not verify is refused rather than ignored. */
  private isTestEvent(endpoint: HookEndpointRow, body: Buffer, headers: IncomingHttpHeaders): boolean {
    const mark = header(headers, TEST_EVENT_MARK_HEADER);
    if (mark === undefined) return false;
    if (this.store.isTestEventMark(endpoint.endpointUuid, body, mark)) return true;
    throw new ApiError(400, 'test_event_mark_invalid', `${TEST_EVENT_MARK_HEADER}: only the engine's own hook.receive-webhook may send this header`, [
      { field: `header.${TEST_EVENT_MARK_HEADER}`, rule: 'engine_only', message: 'not a mark this service made for this body and endpoint' },
    ]);
  }

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
   * hook.receive-webhook's test event is not delivered here: the run that posted it delivers it.
   * It is the engine's own fixed event on a secret_ref endpoint (the worker refuses any other), so
   * it needs no provider signature there.
   */
  async receive(endpointUuid: string, body: Buffer, headers: IncomingHttpHeaders): Promise<{ event_uuid: string }> {
    const id = canonicalUuid(endpointUuid);
    const endpoint = id ? await this.store.activeEndpoint(id) : undefined;
    if (!endpoint) throw notFound(`endpoint ${endpointUuid}`);
    await this.refuseOwnDelivery(headers['webhook-id']);
    const testEvent = this.isTestEvent(endpoint, body, headers);
    if (endpoint.secretSource === 'secret_ref' && !testEvent) this.requireProviderSignature(endpoint, body, headers);
    let text: string;
    try {
      text = strictUtf8.decode(body);
    } catch {
      throw validationFailed([{ field: 'body', rule: 'utf8', message: 'must be UTF-8 text' }]);
    }
    const unstorable = findUnstorableText(text, ['body']);
    if (unstorable) throw validationFailed([unstorable]);
    const event = await this.store.insertEvent(endpoint, text, keptHeaders(headers));
    if (testEvent) return { event_uuid: event.eventUuid };
    this.runs.start(ingressPrincipal(endpoint.organizationUuid), { workflow_type: REPLAY_TYPE, initial_data: { event_uuid: event.eventUuid } }).catch((err) => {
      const fields = { err: loggableError(err), event_uuid: event.eventUuid, organization_uuid: endpoint.organizationUuid };
      this.log.warn(fields, 'hook delivery not started; the event stays pending');
    });
    return { event_uuid: event.eventUuid };
  }
}
