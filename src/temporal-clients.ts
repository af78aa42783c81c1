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
  ) {}

  forOrganization(organization: string): Client {
    let client = this.clients.get(organization);
    if (!client) {
      const codec = new OrganizationCodec(this.keys, organization, true);
      client = new Client({
        connection: this.connection,
        namespace: this.namespace,
        dataConverter: { payloadCodecs: [codec] },
        // Propagate the request's trace into the run (a no-op while no tracer provider is registered).
        interceptors: { workflow: [runClientAttributes(organization), new OpenTelemetryWorkflowClientInterceptor()] },
      });
      this.clients.set(organization, client);
    }
    return client;
  }
}
