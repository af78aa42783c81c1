import { ApplicationFailure } from '@temporalio/common';
import type { ConnectionStore } from './connections';
import { callProvider, type ProviderHttpConfig, type ProviderResponse } from './provider-http';

export interface EsignRequest {
  organization_uuid: string;
  base_url: string;
  api_token?: string;
  /** An esign connection of the run's organization holding the api_token. */
  connection_uuid?: string;
  method: 'GET' | 'DELETE';
  /** Path below base_url, already percent-encoded. */
  path: string;
  /** The delete call needs a token; the resource listing is served without one. */
  token_required: boolean;
}

export interface EsignConfig extends ProviderHttpConfig {
  /** ESIGN_API_TOKEN: the fallback when a run brings neither api_token nor connection. */
  defaultApiToken?: string;
  connections?: ConnectionStore;
}

export function createEsignActivities(config: EsignConfig) {
  return {
    async esignRequest(req: EsignRequest): Promise<ProviderResponse> {
      let token = req.api_token;
      if (!token && req.connection_uuid) {
        if (!config.connections) throw ApplicationFailure.nonRetryable('connections are not configured', 'connection_not_found');
        const { secrets } = await config.connections.resolve({
          organization_uuid: req.organization_uuid,
          connection_uuid: req.connection_uuid,
          plugin: 'esign',
        });
        token = String(secrets.api_token);
      }
      token ||= config.defaultApiToken;
      if (req.token_required && !token) {
        throw ApplicationFailure.nonRetryable(
          'no e-signature API token: pass api_token or set ESIGN_API_TOKEN on the worker',
          'missing_api_token',
        );
      }
      const url = req.base_url.replace(/\/+$/, '') + req.path;
      return callProvider(config, { method: req.method, url, bearer: token, provider: 'e-signature API' });
    },
  };
}

export type EsignActivities = ReturnType<typeof createEsignActivities>;
