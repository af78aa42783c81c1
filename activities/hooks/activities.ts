import { ApplicationFailure } from '@temporalio/common';
import { type Dispatcher, fetch } from 'undici';
import type { ConnectionStore } from '../connections';
import { currentLedger } from '../provider-attempts';
import { callSignal, fetchFailure, heartbeatWhileWaiting } from '../provider-http';
import { type DeliveryHttpConfig, deliverSigned } from './delivery';
import { createEndpoint } from './endpoints';
import { secretRefRefusal } from './secret-ref';
import { DEFAULT_TEST_EVENT } from '../../workflows/hook/contract';
import { ACKNOWLEDGE_REFUSALS, endpointView, type HookEndpointRow, type HookStore, ingressUrl, TEST_EVENT_MARK_HEADER } from './store';
import { type TargetPolicy, targetUrlProblem } from './target';

export interface HookActivitiesConfig extends DeliveryHttpConfig, TargetPolicy {
  store: HookStore;
  connections: ConnectionStore;
  /**
   * For hook.receive-webhook's post to the ingress alone: the worker's also reaches PUBLIC_API_URL's
   * origin, which `dispatcher` (deliveries) must refuse.
   */
  ingressDispatcher: Dispatcher;
}

const notFound = (what: string, type: string) => ApplicationFailure.nonRetryable(`${what} does not exist in this organization`, type);

/**
 * An endpoint whose secret comes from secret_ref signs its deliveries with a payments webhook
 * secret: a test event of the caller's choosing would come back with a provider's signature.
 */
export function refuseCustomTestEvent(testEvent: unknown) {
  if (JSON.stringify(testEvent) === JSON.stringify(DEFAULT_TEST_EVENT)) return;
  throw ApplicationFailure.nonRetryable(
    "test_event: an endpoint whose secret comes from secret_ref takes only the engine's default test event (omit test_event)",
    'test_event_not_allowed',
  );
}

/** A 2xx is delivered; 5xx, 429 and no answer are worth another attempt; anything else is the target's final word. */
const retryableStatus = (status: number) => status >= 500 || status === 429;

export function createHookActivities(config: HookActivitiesConfig) {
  const { store } = config;

  async function requireEndpoint(organizationUuid: string, endpointUuid: string): Promise<HookEndpointRow> {
    const row = await store.endpoint(organizationUuid, endpointUuid);
    if (!row) throw notFound(`endpoint ${endpointUuid}`, 'endpoint_not_found');
    return row;
  }

  /**
   * Idempotent on (organization, endpoint_name): a re-driven run finds the endpoint it made.
   * The secret is generated here or copied from secret_ref, sealed, and never returned.
   */
  async function createRedirect(req: { organization_uuid: string; endpoint_name: string; target_url: string; secret_ref?: string }) {
    const problem = targetUrlProblem(req.target_url, config);
    if (problem) throw ApplicationFailure.nonRetryable(`target_url ${problem}`, 'target_url_refused');
    const view = (row: HookEndpointRow) => {
      const { endpoint_uuid, ingress_url, name, target_url, secret_source } = endpointView(row, config.publicApiUrl);
      return { endpoint_uuid, ingress_url, endpoint_name: name, target_url, secret_source };
    };
    const existing = await store.endpointByName(req.organization_uuid, req.endpoint_name);
    if (existing) {
      if (existing.targetUrl === req.target_url) return view(existing);
      throw ApplicationFailure.nonRetryable(`an endpoint named "${req.endpoint_name}" already exists with another target_url`, 'endpoint_name_taken');
    }
    const created = await createEndpoint({ hooks: store, connections: config.connections }, req.organization_uuid, {
      name: req.endpoint_name,
      target_url: req.target_url,
      secret_ref: req.secret_ref,
    });
    if ('row' in created) return view(created.row);
    if (created.refused !== 'endpoint_name_taken') throw secretRefRefusal(created.refused, req.secret_ref!);
    // Lost a race with a concurrent creation of the same name: decide against what it stored.
    return createRedirect(req);
  }

  return {
    hookCreateRedirect: createRedirect,

    /**
     * Posts the event to the endpoint's own public ingress, as any sender would, then finds it
     * stored. It posts with X-Request-Id `request_id` (the run and its attempt): an attempt retried
     * after the ingress stored the event but its answer was lost finds that event instead of posting a second.
     * The test event mark keeps the ingress from delivering it: hook.replay-event does, once.
     */
    async hookReceiveWebhook(req: { organization_uuid: string; endpoint_uuid: string; test_event: unknown; request_id?: string }) {
      const endpoint = await requireEndpoint(req.organization_uuid, req.endpoint_uuid);
      const body = JSON.stringify(req.test_event);
      if (endpoint.secretSource === 'secret_ref') refuseCustomTestEvent(req.test_event);
      // The body too: anyone may post to the public ingress, naming any request id.
      const prior = req.request_id && (await store.eventByRequestId(req.organization_uuid, req.endpoint_uuid, req.request_id));
      if (prior && prior.body === body) return { event_uuid: prior.eventUuid, ingress_status: 202 as const };
      // The stored id (a UUID we generated), not the run's input: nothing the run says goes into the path.
      const url = ingressUrl(config.publicApiUrl, endpoint.endpointUuid);
      let res;
      const stopHeartbeat = heartbeatWhileWaiting();
      try {
        res = await fetch(url, {
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'workflow-engine-hooks/1',
            [TEST_EVENT_MARK_HEADER]: store.testEventMark(endpoint.endpointUuid, body),
            ...(req.request_id ? { 'x-request-id': req.request_id } : {}),
          },
          redirect: 'error',
          signal: callSignal(config.timeoutMs),
          dispatcher: config.ingressDispatcher,
        });
      } catch (err) {
        throw ApplicationFailure.retryable(`ingress unreachable: ${fetchFailure(err).detail}`, 'ingress_unreachable');
      } finally {
        stopHeartbeat();
      }
      const text = await res.text();
      if (res.status !== 202) {
        const failure = `ingress answered HTTP ${res.status}`;
        if (res.status >= 500) throw ApplicationFailure.retryable(failure, 'ingress_unavailable');
        throw ApplicationFailure.nonRetryable(failure, 'ingress_rejected', { ingress_status: res.status });
      }
      const eventUuid = String((JSON.parse(text) as { event_uuid?: unknown }).event_uuid);
      if (!(await store.event(req.organization_uuid, eventUuid))) {
        throw ApplicationFailure.nonRetryable(`the ingress answered 202 but event ${eventUuid} is not stored`, 'event_not_stored');
      }
      return { event_uuid: eventUuid, ingress_status: 202 as const };
    },

    /**
     * One signed delivery attempt, recorded on the event whatever its outcome. A 5xx, 429 or no
     * answer is retryable (the workflow's retry policy backs off); any other non-2xx is final.
     */
    async hookDeliverEvent(req: { organization_uuid: string; event_uuid: string }) {
      const event = await store.event(req.organization_uuid, req.event_uuid);
      if (!event) throw notFound(`event ${req.event_uuid}`, 'event_not_found');
      // Expired is final: not even a retry already scheduled when the event expired delivers it.
      if (event.state === 'expired') throw ApplicationFailure.nonRetryable(`event ${req.event_uuid} has expired and is not delivered`, 'event_expired');
      const endpoint = await requireEndpoint(req.organization_uuid, event.endpointUuid);
      const problem = targetUrlProblem(endpoint.targetUrl, config);
      if (problem) throw ApplicationFailure.nonRetryable(`target_url ${problem}`, 'target_url_refused');
      const at = new Date().toISOString();
      const stopHeartbeat = heartbeatWhileWaiting();
      const outcome = await deliverSigned(config, {
        url: endpoint.targetUrl,
        body: event.body,
        contentType: (event.headers as Record<string, string>)['content-type'] ?? 'application/json',
        secret: store.secretOf(endpoint),
        eventUuid: event.eventUuid,
      }).finally(stopHeartbeat);
      const status = outcome.status_code;
      const delivered = status !== null && status >= 200 && status < 300;
      await store.recordAttempt(
        event.eventUuid,
        { at, status_code: status, latency_ms: outcome.latency_ms, ...(outcome.error ? { error: outcome.error } : {}) },
        delivered,
      );
      const kept = { target_status: status, latency_ms: outcome.latency_ms };
      if (delivered) return { event_uuid: event.eventUuid, target_status: status, latency_ms: outcome.latency_ms, delivered_at: at };
      if (outcome.refused) throw ApplicationFailure.nonRetryable(`target not called: ${outcome.error}`, 'outbound_policy', kept);
      if (status === null) throw ApplicationFailure.retryable(`target ${outcome.error} (attempt ${currentLedger().attempt})`, 'target_unreachable', kept);
      const message = `target answered HTTP ${status}`;
      if (retryableStatus(status)) throw ApplicationFailure.retryable(message, 'target_rejected', kept);
      throw ApplicationFailure.nonRetryable(message, 'target_rejected', kept);
    },

    async hookAcknowledgeEvent(req: { organization_uuid: string; event_uuid: string }) {
      const outcome = await store.acknowledge(req.organization_uuid, req.event_uuid);
      if ('row' in outcome) {
        return { event_uuid: outcome.row.eventUuid, event_state: 'acknowledged' as const, acknowledged_at: outcome.row.acknowledgedAt!.toISOString() };
      }
      if (outcome.refused === 'event_not_found') throw notFound(`event ${req.event_uuid}`, 'event_not_found');
      throw ApplicationFailure.nonRetryable(ACKNOWLEDGE_REFUSALS[outcome.refused](req.event_uuid), outcome.refused);
    },

    async hookExpirePendingEvents(req: { organization_uuid: string; endpoint_uuid: string; ttl_seconds: number }) {
      await requireEndpoint(req.organization_uuid, req.endpoint_uuid);
      const expired = await store.expirePending(req.organization_uuid, req.endpoint_uuid, new Date(Date.now() - req.ttl_seconds * 1000));
      return { expired_count: expired.length, expired_event_uuids: expired };
    },
  };
}

export type HookActivities = ReturnType<typeof createHookActivities>;
