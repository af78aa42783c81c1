import { sql } from 'drizzle-orm';
import type { NextFunction, Request, Response } from 'express';
import type { Database } from '../../db/client';
import { identityApps } from '../../db/schema';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'authorization, content-type, idempotency-key, last-event-id';
const EXPOSED_HEADERS = 'Retry-After, Idempotent-Replayed, WWW-Authenticate';
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 1_000;

/**
 * CORS for browser apps of end users (sdk/browser-auth): an origin is admitted when it is the
 * origin of a redirect URI some identity app registered. The API authenticates by bearer token
 * only, so no credentials are allowed. Before the 405 check, which would refuse the preflight's
 * OPTIONS; the codec endpoint keeps its own CORS (TEMPORAL_UI_ORIGINS).
 */
export function browserCors(db: Database) {
  const cache = new Map<string, { allowed: boolean; until: number }>();

  async function registered(origin: string): Promise<boolean> {
    const hit = cache.get(origin);
    if (hit && hit.until > Date.now()) return hit.allowed;
    const rows = await db
      .select({ one: sql<number>`1` })
      .from(identityApps)
      .where(
        sql`exists (select 1 from jsonb_array_elements_text(${identityApps.redirectUris}) as r(uri) where r.uri = ${origin} or starts_with(r.uri, ${`${origin}/`}))`,
      )
      .limit(1);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(origin, { allowed: rows.length > 0, until: Date.now() + CACHE_TTL_MS });
    return rows.length > 0;
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || !isWebOrigin(origin) || !req.path.startsWith('/api/') || req.path.startsWith('/api/temporal-codec')) {
      return next();
    }
    registered(origin).then(
      (allowed) => {
        res.vary('Origin');
        if (!allowed) return next();
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
        if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return next();
        res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
        res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
      },
      // The database is away: no CORS headers; the route itself answers 503.
      () => next(),
    );
  };
}

function isWebOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin;
  } catch {
    return false;
  }
}
