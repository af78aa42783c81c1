import { ApplicationFailure } from '@temporalio/common';
import type { ConnectionStore } from './connections';
import { originOf, sameOrigin } from './origin';
import { callProvider, type ProviderHttpConfig, type ProviderResponse } from './provider-http';
import { providerUrl } from './provider-path';
import { secretValues } from './scrub';

export interface EsignRequest {
  organization_uuid: string;
  /** The API root to call; without it, the connection's. */
  base_url?: string;
  api_token?: string;
  /** An esign connection of the run's organization: its api_token goes only to its own base_url. */
  connection_uuid?: string;
  method: 'GET' | 'DELETE';
  /** Path below base_url, already percent-encoded. */
  path: string;
  /** The delete call needs a token; the resource listing is served without one. */
  token_required: boolean;
  /** Set by a retry of a run whose DELETE may have acted at the provider unanswered: a 404 means it did. */
  earlier_outcome_unknown?: true;
}

export interface EsignConfig extends ProviderHttpConfig {
  /** ESIGN_API_TOKEN: the fallback when a run brings neither api_token nor connection. */
  defaultApiToken?: string;
  /** ESIGN_API_BASE_URL: the only origin defaultApiToken is ever sent to. */
  defaultApiBaseUrl?: string;
  connections?: ConnectionStore;
}

interface Credentials {
  baseUrl: string;
  bearer?: string;
  /** Every secret of the connection used, to cut out of the answer. */
  secrets: string[];
}

export function createEsignActivities(config: EsignConfig) {
  /**
   * Picks the token and where it may go, before anything is sent: the run's own api_token goes
   * to the run's base_url; a connection's only to the origin stored with it; ESIGN_API_TOKEN only
   * to the origin of ESIGN_API_BASE_URL.
   */
  async function credentialsFor(req: EsignRequest): Promise<Credentials> {
    let connection: { token: string; destination: string; secrets: string[] } | undefined;
    if (req.connection_uuid) {
      if (!config.connections) throw ApplicationFailure.nonRetryable('connections are not configured', 'connection_not_found');
      const resolved = await config.connections.resolve({
        organization_uuid: req.organization_uuid,
        connection_uuid: req.connection_uuid,
        plugin: 'esign',
      });
      connection = { token: String(resolved.secrets.api_token), destination: resolved.destination!, secrets: secretValues(resolved.secrets) };
    }
    const baseUrl = req.base_url ?? connection?.destination;
    if (!baseUrl) throw ApplicationFailure.nonRetryable('base_url is required without connection_uuid', 'invalid_input');
    if (connection && !sameOrigin(baseUrl, connection.destination)) {
      throw ApplicationFailure.nonRetryable(
        `base_url ${originOf(baseUrl) ?? baseUrl} is not the origin of connection ${req.connection_uuid} (${originOf(connection.destination)}): its token is sent only there`,
        'connection_destination_mismatch',
      );
    }
    const fallback = sameOrigin(baseUrl, config.defaultApiBaseUrl) ? config.defaultApiToken : undefined;
    return { baseUrl, bearer: req.api_token || connection?.token || fallback, secrets: connection?.secrets ?? [] };
  }

  return {
    async esignRequest(req: EsignRequest): Promise<ProviderResponse> {
      const { baseUrl, bearer, secrets } = await credentialsFor(req);
      if (req.token_required && !bearer) {
        throw ApplicationFailure.nonRetryable(
          'no e-signature API token may be sent to this base_url: pass api_token or connection_uuid (ESIGN_API_TOKEN goes only to the origin of ESIGN_API_BASE_URL)',
          'missing_credentials',
        );
      }
      const url = providerUrl(baseUrl, req.path);
      const credential = bearer ? { bearer, origin: baseUrl } : undefined;
      return callProvider(config, {
        method: req.method,
        url,
        credential,
        secrets,
        provider: 'e-signature API',
        earlierOutcomeUnknown: req.earlier_outcome_unknown,
      });
    },
  };
}

export type EsignActivities = ReturnType<typeof createEsignActivities>;
