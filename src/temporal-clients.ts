import { Client, type Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { OrganizationCodec } from '../activities/payload-codec';
import type { MasterPayloadKeys } from '../activities/payload-keys';
import { runClientAttributes } from './telemetry/run-attributes';

/**
 * The API's Temporal clients, one per organization on one connection: a request
 * acts through the client of its principal's organization, whose codec encrypts
 * under that organization and decrypts only its payloads (and platform payloads
 * recorded before organizations were bound). No code path of a request can
 * encode or read another organization's payloads.
 */
export class TemporalClients {
  private readonly clients = new Map<string, Client>();

  constructor(
    readonly connection: Connection,
    private readonly namespace: string,
    readonly keys: MasterPayloadKeys,
    /** Traces on: the client interceptors carry the request's trace into the run. Off, a start pays for none. */
    private readonly traced = false,
  ) {}

  forOrganization(organization: string): Client {
    let client = this.clients.get(organization);
    if (!client) {
      const codec = new OrganizationCodec(this.keys, organization, true);
      client = new Client({
        connection: this.connection,
        namespace: this.namespace,
        dataConverter: { payloadCodecs: [codec] },
        interceptors: this.traced ? { workflow: [runClientAttributes(organization), new OpenTelemetryWorkflowClientInterceptor()] } : undefined,
      });
      this.clients.set(organization, client);
    }
    return client;
  }
}
