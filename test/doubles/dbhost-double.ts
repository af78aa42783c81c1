import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the database-host REST API (/api/v2), following the
 * provider's documented shapes: `{operation: {id, project_id, action, status,
 * failures_count, created_at, updated_at, total_duration_ms}}`, `{endpoints:
 * [{id, host, project_id, branch_id, type, current_state, …}]}` and `{code,
 * message}` errors. Every call must carry `Authorization: Bearer
 * DBHOST_VALID_TOKEN`, else 401.
 *
 * The project id picks a behaviour for every call under it:
 *   missing-*  404 (unknown project)         flaky-*  500 on the first call of each path, then normal
 *   down-*     503 every time                hang-*   never answers
 *   empty-*    no endpoints                  anything else: normal
 * The operation id `<kind>-<n>-…` picks how the operation's status evolves over
 * the reads of that operation (counted per operation, so tests can assert poll counts):
 *   finishes-n   scheduling, then running, …; finished from the n-th read on
 *   fails-n      running …; failed from the n-th read on (with an error message)
 *   errors-n     running …; error from the n-th read on
 *   cancelled-n  cancelling …; cancelled from the n-th read on
 *   skipped-n    scheduling …; skipped from the n-th read on
 *   never-…      running, always
 * any other operation id is 404. A project `echo401-*` answers 401 whatever the token, quoting the
 * Authorization header in its message. GET /__calls lists every call received.
 */
export const DBHOST_VALID_TOKEN = 'dbhost-double-valid-token-8c2e';

export interface DbhostCall {
  method: string;
  path: string;
  authorization: string | null;
  at: number;
}

const OPERATION_PATH = /^\/api\/v2\/projects\/([^/]+)\/operations\/([^/]+)$/;
const ENDPOINTS_PATH = /^\/api\/v2\/projects\/([^/]+)\/endpoints$/;

const AUTH_REQUIRED = { code: '', message: 'authentication required' };
const PROJECT_NOT_FOUND = { code: '', message: 'project not found' };
const OPERATION_NOT_FOUND = { code: '', message: 'operation not found' };
const INTERNAL = { code: '', message: 'internal server error' };
const UNAVAILABLE = { code: '', message: 'service unavailable' };

/** The endpoints the double lists for a project: one read-write and one read-only compute. */
export function doubleEndpoints(projectId: string): Array<Record<string, unknown>> {
  const common = {
    project_id: projectId,
    region_id: 'aws-us-east-2',
    autoscaling_limit_min_cu: 0.25,
    autoscaling_limit_max_cu: 2,
    settings: {},
    pooler_enabled: false,
    pooler_mode: 'transaction',
    disabled: false,
    passwordless_access: true,
    creation_source: 'console',
    created_at: '2024-05-02T10:11:12Z',
    updated_at: '2024-05-03T08:09:10Z',
    suspend_timeout_seconds: 0,
    provisioner: 'k8s-neonvm',
  };
  return [
    {
      host: 'ep-little-smoke-851426.us-east-2.aws.neon.tech',
      id: 'ep-little-smoke-851426',
      branch_id: 'br-wispy-cloud-987654',
      type: 'read_write',
      current_state: 'active',
      last_active: '2024-05-03T08:00:00Z',
      proxy_host: 'us-east-2.aws.neon.tech',
      ...common,
    },
    {
      host: 'ep-quiet-river-220931.us-east-2.aws.neon.tech',
      id: 'ep-quiet-river-220931',
      branch_id: 'br-wispy-cloud-987654',
      type: 'read_only',
      current_state: 'idle',
      proxy_host: 'us-east-2.aws.neon.tech',
      ...common,
    },
  ];
}

/** The status an operation shows at its `read`-th read, or undefined for an unknown operation. */
export function operationStatus(operationId: string, read: number): string | undefined {
  const [kind, n] = operationId.split('-');
  const at = Number.parseInt(n, 10);
  const final = (before: string, after: string) => (Number.isFinite(at) && read >= at ? after : before);
  switch (kind) {
    case 'finishes':
      return final(read === 1 ? 'scheduling' : 'running', 'finished');
    case 'fails':
      return final('running', 'failed');
    case 'errors':
      return final('running', 'error');
    case 'cancelled':
      return final('cancelling', 'cancelled');
    case 'skipped':
      return final('scheduling', 'skipped');
    case 'never':
      return 'running';
    default:
      return undefined;
  }
}

export async function startDbhostDouble(): Promise<{ url: string; calls: DbhostCall[]; close(): Promise<void> }> {
  const calls: DbhostCall[] = [];
  const seen = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const created = new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    if (url.pathname === '/__calls') return send(res, 200, calls);
    const authorization = req.headers.authorization ?? null;
    calls.push({ method: req.method ?? '', path: url.pathname, authorization, at: Date.now() });
    if (url.pathname.startsWith('/api/v2/projects/echo401-')) return send(res, 401, { code: '', message: `bad token ${authorization}` });
    if (authorization !== `Bearer ${DBHOST_VALID_TOKEN}`) return send(res, 401, AUTH_REQUIRED);

    const operation = OPERATION_PATH.exec(url.pathname);
    const endpoints = ENDPOINTS_PATH.exec(url.pathname);
    if (req.method !== 'GET' || !(operation || endpoints)) return send(res, 404, { code: '', message: 'not found' });
    const projectId = decodeURIComponent((operation ?? endpoints)![1]);
    const count = (seen.get(url.pathname) ?? 0) + 1;
    seen.set(url.pathname, count);
    const [behaviour] = projectId.split('-');
    if (behaviour === 'missing') return send(res, 404, PROJECT_NOT_FOUND);
    if (behaviour === 'down') return send(res, 503, UNAVAILABLE);
    if (behaviour === 'hang') return void hanging.add(res);
    // 500 once per path; the reads that follow count from 1, so statuses evolve as for any project.
    if (behaviour === 'flaky' && count === 1) return send(res, 500, INTERNAL);
    const read = behaviour === 'flaky' ? count - 1 : count;

    if (endpoints) return send(res, 200, { endpoints: behaviour === 'empty' ? [] : doubleEndpoints(projectId) });

    const operationId = decodeURIComponent(operation![2]);
    const status = operationStatus(operationId, read);
    if (!status) return send(res, 404, OPERATION_NOT_FOUND);
    send(res, 200, {
      operation: {
        id: operationId,
        project_id: projectId,
        branch_id: 'br-wispy-cloud-987654',
        endpoint_id: 'ep-little-smoke-851426',
        action: 'start_compute',
        status,
        ...(status === 'failed' || status === 'error' ? { error: 'compute failed to start' } : {}),
        failures_count: status === 'failed' || status === 'error' ? 1 : 0,
        created_at: created,
        updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        total_duration_ms: read * 100,
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
