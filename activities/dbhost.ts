import { ApplicationFailure } from '@temporalio/common';
import type { ConnectionStore } from './connections';
import { outboundUrlProblem } from './outbound';
import { callProvider, type ProviderHttpConfig } from './provider-http';
import { providerUrl } from './provider-path';
import { secretValues } from './scrub';

/**
 * The database-host provider's public API host. Calls go to
 * {dbhost_api}/api/v2/…, so this is the host root, not the /api/v2 root.
 */
export const DBHOST_DEFAULT_API = 'https://console.neon.tech';

const PROVIDER = 'database-host API';

export interface DbhostConfig extends ProviderHttpConfig {
  connections?: ConnectionStore;
}

export interface DbhostProjectRequest {
  organization_uuid: string;
  /** A dbhost connection of the run's organization: holds api_token and, optionally, api_url. */
  connection_uuid: string;
  dbhost_project_id: string;
}

export interface DbhostOperationRequest extends DbhostProjectRequest {
  dbhost_operation_id: string;
}

/** Only what the workflow decides on: the provider's operation body stays out of Temporal history. */
export interface DbhostOperationStatus {
  status: string;
}

export interface DbhostEndpoints {
  /** The provider's `endpoints` array, exactly as returned. */
  endpoints: unknown[];
}

/**
 * The API root a connection points at: its api_url, else the provider's public
 * host. A trailing /api/v2 (the provider's documented API root) is accepted and
 * not doubled.
 */
export function dbhostApiRoot(config: Record<string, unknown> | undefined): string {
  const configured = typeof config?.api_url === 'string' && config.api_url.trim() ? config.api_url.trim() : DBHOST_DEFAULT_API;
  return configured.replace(/\/+$/, '').replace(/\/api\/v2$/, '');
}

export function createDbhostActivities(config: DbhostConfig) {
  /**
   * Resolves the connection here, inside the activity, so the api_token never
   * enters Temporal history; a connection of another organization or plugin
   * fails closed before any provider call.
   */
  async function get(req: DbhostProjectRequest, path: string): Promise<unknown> {
    if (!config.connections) throw ApplicationFailure.nonRetryable('connections are not configured on this worker', 'connection_not_found');
    const { secrets, destination } = await config.connections.resolve({
      organization_uuid: req.organization_uuid,
      connection_uuid: req.connection_uuid,
      plugin: 'dbhost',
    });
    const token = typeof secrets.api_token === 'string' ? secrets.api_token : '';
    if (!token) {
      throw ApplicationFailure.nonRetryable(`connection ${req.connection_uuid} holds no api_token`, 'missing_api_token');
    }
    const root = destination!;
    const problem = outboundUrlProblem(root, config.allowHttpHosts);
    if (problem) throw ApplicationFailure.nonRetryable(`connection api_url ${problem}`, 'https_required');
    try {
      const { response } = await callProvider(config, {
        method: 'GET',
        url: providerUrl(root, path),
        credential: { bearer: token, origin: root },
        secrets: secretValues(secrets),
        provider: PROVIDER,
      });
      return response;
    } catch (err) {
      // Same message, type and retryability; without the provider body, which the dbhost outputs do not carry.
      if (err instanceof ApplicationFailure) {
        throw ApplicationFailure.create({ message: err.message, type: err.type ?? undefined, nonRetryable: Boolean(err.nonRetryable) });
      }
      throw err;
    }
  }

  const projectPath = (req: DbhostProjectRequest) => `/api/v2/projects/${encodeURIComponent(req.dbhost_project_id)}`;

  return {
    /** GET {dbhost_api}/api/v2/projects/{project}/operations/{operation} → the operation's status. */
    async dbhostGetOperation(req: DbhostOperationRequest): Promise<DbhostOperationStatus> {
      const body = await get(req, `${projectPath(req)}/operations/${encodeURIComponent(req.dbhost_operation_id)}`);
      const status = (body as { operation?: { status?: unknown } } | null)?.operation?.status;
      if (typeof status !== 'string' || !status) {
        throw ApplicationFailure.nonRetryable(`${PROVIDER} answered without operation.status`, 'invalid_response');
      }
      return { status };
    },

    /** GET {dbhost_api}/api/v2/projects/{project}/endpoints → the provider's endpoints list. */
    async dbhostListEndpoints(req: DbhostProjectRequest): Promise<DbhostEndpoints> {
      const body = await get(req, `${projectPath(req)}/endpoints`);
      const endpoints = (body as { endpoints?: unknown } | null)?.endpoints;
      if (!Array.isArray(endpoints)) {
        throw ApplicationFailure.nonRetryable(`${PROVIDER} answered without an endpoints list`, 'invalid_response');
      }
      return { endpoints };
    },
  };
}

export type DbhostActivities = ReturnType<typeof createDbhostActivities>;
