import type { IncomingMessage } from 'node:http';

/**
 * The route a request matched, as declared (`/api/workflows/:id`): what log lines name instead of
 * the URL, whose path and query may carry tokens or other values. Undefined before routing and
 * for a path no route matches.
 */
export function requestRoute(req: IncomingMessage): string | undefined {
  const { route, baseUrl } = req as IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
  return typeof route?.path === 'string' ? (baseUrl ?? '') + route.path : undefined;
}
