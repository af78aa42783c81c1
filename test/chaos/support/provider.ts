import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DBHOST_VALID_TOKEN, doubleEndpoints, operationStatus } from '../../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN } from '../../doubles/esign-double';

/**
 * One loopback provider for the chaos suites, speaking both wire formats of
 * test/doubles (e-signature under /api/v2.1, database host under /api/v2) with
 * the same id-prefix behaviours:
 *   DELETE …/authorization/ok-*     204            …/authorization/flaky-*  500 once, then 204
 *                                   (once a 204 is sent the authorization is gone: later DELETEs get 404)
 *   GET /api/v2.1                   the resource list
 *   GET …/projects/<p>/endpoints    the endpoint list (project flaky-*: 500 once per path)
 *   GET …/operations/finishes-<n>-… running, then finished from the n-th read on
 * Unlike those doubles it records, per call, when it arrived, when (and with which
 * status) it was answered, and whether the caller went away before the answer
 * (`cutOff`: the call was in flight when its worker died). Each answer is held for
 * a random 0..holdMaxMs (under the stack's PROVIDER_TIMEOUT_MS), so kills land
 * while calls are in flight.
 */
export interface ProviderCall {
  method: string;
  path: string;
  arrivedAt: number;
  answeredAt?: number;
  status?: number;
  cutOff: boolean;
}

const DELETE_PATH = /^\/api\/v2\.1\/accounts\/[^/]+\/users\/[^/]+\/authorization\/([^/]+)$/;
const OPERATION_PATH = /^\/api\/v2\/projects\/([^/]+)\/operations\/([^/]+)$/;
const ENDPOINTS_PATH = /^\/api\/v2\/projects\/([^/]+)\/endpoints$/;
const RESOURCES = { resources: [{ name: 'accounts', value: '/v2.1/accounts' }] };

export interface ChaosProvider {
  /** For esign base_url: `<origin>/api`. */
  esignUrl: string;
  /** For a dbhost connection's api_url: the origin. */
  dbhostUrl: string;
  calls: ProviderCall[];
  callsTo(path: string): ProviderCall[];
  close(): Promise<void>;
}

export async function startChaosProvider(options: { holdMaxMs?: number } = {}): Promise<ChaosProvider> {
  const holdMaxMs = options.holdMaxMs ?? 1_000;
  const calls: ProviderCall[] = [];
  const byPath = new Map<string, ProviderCall[]>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://provider').pathname;
    const call: ProviderCall = { method: req.method ?? '', path, arrivedAt: Date.now(), cutOff: false };
    calls.push(call);
    const earlier = byPath.get(path) ?? [];
    byPath.set(path, [...earlier, call]);
    const count = earlier.length + 1;
    res.on('close', () => {
      if (!res.writableFinished) call.cutOff = true;
    });
    const send = (status: number, body?: unknown) => {
      if (res.destroyed) return;
      call.status = status;
      res.once('finish', () => (call.answeredAt = Date.now()));
      if (body === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const answer = () => {
      const auth = req.headers.authorization;
      const del = DELETE_PATH.exec(path);
      if (req.method === 'DELETE' && del) {
        if (auth !== `Bearer ${ESIGN_VALID_TOKEN}`) return send(401, { errorCode: 'USER_AUTHENTICATION_FAILED', message: 'bad token' });
        const behaviour = decodeURIComponent(del[1]).split('-')[0];
        if (behaviour === 'flaky' && count === 1) return send(500, { errorCode: 'INTERNAL_SERVER_ERROR', message: 'once' });
        if ((behaviour === 'ok' || behaviour === 'flaky') && !earlier.some((c) => c.status === 204)) return send(204);
        return send(404, { errorCode: 'RESOURCE_NOT_FOUND', message: 'unknown behaviour' });
      }
      if (req.method === 'GET' && path === '/api/v2.1') return send(200, RESOURCES);
      const op = OPERATION_PATH.exec(path);
      const ep = ENDPOINTS_PATH.exec(path);
      if (req.method === 'GET' && (op || ep)) {
        if (auth !== `Bearer ${DBHOST_VALID_TOKEN}`) return send(401, { code: '', message: 'authentication required' });
        const project = decodeURIComponent((op ?? ep)![1]);
        const flaky = project.startsWith('flaky-');
        if (flaky && count === 1) return send(500, { code: '', message: 'internal server error' });
        if (ep) return send(200, { endpoints: doubleEndpoints(project) });
        const operationId = decodeURIComponent(op![2]);
        const status = operationStatus(operationId, flaky ? count - 1 : count);
        if (!status) return send(404, { code: '', message: 'operation not found' });
        return send(200, { operation: { id: operationId, project_id: project, action: 'start_compute', status, failures_count: 0 } });
      }
      send(404, { errorCode: 'RESOURCE_NOT_FOUND', message: 'not found' });
    };
    setTimeout(answer, Math.floor(Math.random() * holdMaxMs));
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    esignUrl: `${origin}/api`,
    dbhostUrl: origin,
    calls,
    callsTo: (p) => byPath.get(p) ?? [],
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
