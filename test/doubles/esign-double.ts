import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the e-signature REST API (v2.1). It checks method,
 * path and bearer token and answers with the provider's documented JSON shapes:
 * `{errorCode, message}` errors, an empty 2xx for the delete, the resource list
 * for GET /v2.1. The authorization id picks a behaviour:
 *   ok-*       204, empty body              missing-*  404 RESOURCE_NOT_FOUND
 *   flaky-*    500 once, then 204           down-*     503 every time
 *   hang-*     never answers                slow-*     204 after 1 s
 *   once401-*  401 once, then 204
 *   lost<N>-*  deleted by the first call, whose answer is lost with those of the first N calls (they
 *              never answer); later calls 404, as the provider answers for a deleted authorization
 *   echo401-*  401 whatever the token, quoting the Authorization header in its JSON message
 *   echotext401-*  401 whatever the token, a text body quoting it JSON-escaped with `\/` (as PHP writes)
 * GET /__calls lists every call received (tests assert counts on it); so does `calls`.
 */
export const ESIGN_VALID_TOKEN = 'esign-double-valid-token-5f1c';

/** The token a second double, standing for the platform's own e-signature account, accepts. */
export const ESIGN_PLATFORM_TOKEN = 'esign-platform-token-3a9d';

/** The provider's documented bodies, exported so tests compare against exactly what was sent. */
export const ESIGN_BODIES = {
  authFailed: { errorCode: 'USER_AUTHENTICATION_FAILED', message: 'One or both of Username and Password are invalid. Invalid access token' },
  notFound: { errorCode: 'RESOURCE_NOT_FOUND', message: 'The URL provided does not resolve to a resource.' },
  unavailable: { errorCode: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable.' },
  serverError: { errorCode: 'INTERNAL_SERVER_ERROR', message: 'An unexpected error occurred.' },
};

export const ESIGN_RESOURCES = {
  resources: [
    { name: 'accounts', value: '/v2.1/accounts' },
    { name: 'billing_plans', value: '/v2.1/billing_plans' },
    { name: 'current_user', value: '/v2.1/current_user' },
    { name: 'login_information', value: '/v2.1/login_information' },
  ],
};

export interface EsignCall {
  method: string;
  path: string;
  authorization: string | null;
  at: number;
}

const DELETE_PATH = /^\/api\/v2\.1\/accounts\/([^/]+)\/users\/([^/]+)\/authorization\/([^/]+)$/;

export async function startEsignDouble(
  options: { validToken?: string; host?: string } = {},
): Promise<{ url: string; calls: EsignCall[]; close(): Promise<void> }> {
  const host = options.host ?? '127.0.0.1';
  const validToken = options.validToken ?? ESIGN_VALID_TOKEN;
  const calls: EsignCall[] = [];
  const seen = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();

  const send = (res: http.ServerResponse, status: number, body?: unknown) => {
    if (body === undefined) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  const { authFailed, notFound, unavailable, serverError } = ESIGN_BODIES;

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    if (url.pathname === '/__calls') {
      send(res, 200, calls);
      return;
    }
    const authorization = req.headers.authorization ?? null;
    calls.push({ method: req.method ?? '', path: url.pathname, authorization, at: Date.now() });
    const tokenOk = authorization === `Bearer ${validToken}`;

    if (req.method === 'GET' && url.pathname === '/api/v2.1') {
      if (authorization && !tokenOk) return send(res, 401, authFailed);
      return send(res, 200, ESIGN_RESOURCES);
    }
    const del = DELETE_PATH.exec(url.pathname);
    if (req.method === 'DELETE' && del) {
      const authorizationId = decodeURIComponent(del[3]);
      if (authorizationId.startsWith('echo401-')) {
        return send(res, 401, { errorCode: 'USER_AUTHENTICATION_FAILED', message: `bad token ${authorization}` });
      }
      if (authorizationId.startsWith('echotext401-')) {
        const quoted = JSON.stringify({ authorization }).replaceAll('/', '\\/');
        res.writeHead(401, { 'content-type': 'text/plain' }).end(`invalid credentials; request headers ${quoted} (truncated`);
        return;
      }
      if (!tokenOk) return send(res, 401, authFailed);
      const count = (seen.get(url.pathname) ?? 0) + 1;
      seen.set(url.pathname, count);
      const [behaviour] = authorizationId.split('-');
      const lost = /^lost(\d+)$/.exec(behaviour);
      if (lost) {
        if (count > Number(lost[1])) return send(res, 404, notFound);
        hanging.add(res);
        return;
      }
      switch (behaviour) {
        case 'ok':
          return send(res, 204);
        case 'missing':
          return send(res, 404, notFound);
        case 'flaky':
          return count === 1 ? send(res, 500, serverError) : send(res, 204);
        case 'down':
          return send(res, 503, unavailable);
        case 'hang':
          hanging.add(res);
          return;
        case 'slow':
          setTimeout(() => send(res, 204), 1_000);
          return;
        case 'once401':
          return count === 1 ? send(res, 401, authFailed) : send(res, 204);
        default:
          return send(res, 404, notFound);
      }
    }
    send(res, 404, notFound);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/api`,
    calls,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
