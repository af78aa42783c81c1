import { ApplicationFailure } from '@temporalio/common';
import { callProvider, type ProviderHttpConfig, type ProviderResponse } from './provider-http';

export interface EsignRequest {
  base_url: string;
  api_token?: string;
  method: 'GET' | 'DELETE';
  /** Path below base_url, already percent-encoded. */
  path: string;
  /** The delete call needs a token; the resource listing is served without one. */
  token_required: boolean;
}

export interface EsignConfig extends ProviderHttpConfig {
  /** ESIGN_API_TOKEN: the fallback when a run brings no api_token. */
  defaultApiToken?: string;
}

export function createEsignActivities(config: EsignConfig) {
  return {
    async esignRequest(req: EsignRequest): Promise<ProviderResponse> {
      const token = req.api_token || config.defaultApiToken;
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
