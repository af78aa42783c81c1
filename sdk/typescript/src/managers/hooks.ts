import type { Transport } from '../transport.js';
import type { HookEndpoint, HookEndpointCreated, HookEndpointInput, HookEvent, HookEventReplayed, HookSecretRotated } from '../types.js';

/** /hooks: redirect endpoints (a public ingress URL each) and the events they received. */
export class HooksManager {
  constructor(private readonly transport: Transport) {}

  /** The answer carries the generated `signing_secret`: shown once, store it now. */
  async createEndpoint(input: HookEndpointInput): Promise<HookEndpointCreated> {
    return (await this.transport.request<HookEndpointCreated>('/hooks/endpoints', { method: 'POST', body: input, idempotent: false })).body;
  }

  async listEndpoints(): Promise<HookEndpoint[]> {
    return (await this.transport.request<{ endpoints: HookEndpoint[] }>('/hooks/endpoints', { idempotent: true })).body.endpoints;
  }

  async getEndpoint(endpointUuid: string): Promise<HookEndpoint> {
    return (await this.transport.request<HookEndpoint>(this.endpoint(endpointUuid), { idempotent: true })).body;
  }

  /** Deletes the endpoint and its events. */
  async deleteEndpoint(endpointUuid: string): Promise<void> {
    await this.transport.request(this.endpoint(endpointUuid), { method: 'DELETE', idempotent: true });
  }

  /** The new `signing_secret` is shown once, in this answer. */
  async rotateSecret(endpointUuid: string): Promise<HookSecretRotated> {
    const path = `${this.endpoint(endpointUuid)}/rotate-secret`;
    return (await this.transport.request<HookSecretRotated>(path, { method: 'POST', idempotent: false })).body;
  }

  /** Newest first; `limit` 1–500 (API default 100). */
  async listEvents(endpointUuid: string, options: { limit?: number } = {}): Promise<HookEvent[]> {
    const path = `${this.endpoint(endpointUuid)}/events`;
    return (await this.transport.request<{ events: HookEvent[] }>(path, { query: { limit: options.limit }, idempotent: true })).body.events;
  }

  /** The event with its delivery attempts. */
  async getEvent(eventUuid: string): Promise<HookEvent> {
    return (await this.transport.request<HookEvent>(this.event(eventUuid), { idempotent: true })).body;
  }

  /** Delivers the event again, signed, through a hook.replay-event run; a ConflictError once the event has expired. */
  async replayEvent(eventUuid: string): Promise<HookEventReplayed> {
    return (await this.transport.request<HookEventReplayed>(`${this.event(eventUuid)}/replay`, { method: 'POST', idempotent: false })).body;
  }

  /** A ConflictError while the event is pending (never delivered) or once it has expired. Retried like a read: acknowledging again keeps the first time. */
  async acknowledgeEvent(eventUuid: string): Promise<HookEvent> {
    return (await this.transport.request<HookEvent>(`${this.event(eventUuid)}/acknowledge`, { method: 'POST', idempotent: true })).body;
  }

  private endpoint(endpointUuid: string) {
    return `/hooks/endpoints/${encodeURIComponent(endpointUuid)}`;
  }

  private event(eventUuid: string) {
    return `/hooks/events/${encodeURIComponent(eventUuid)}`;
  }
}
