import { sql } from 'drizzle-orm';
import type { NextFunction, Request, Response } from 'express';
import type { Database } from '../../db/client';
import { identityApps } from '../../db/schema';

const REFRESH_MS = 10_000;
/** An origin not in the set re-reads it at most this often, so a new app's origin works at once without a query per request. */
const MISS_REFRESH_MS = 1_000;

/**
 * The origins of every registered redirect URI: where browser apps run. Kept in memory and
 * re-read every few seconds, and on a miss (at most once a second).
 */
export class AppOrigins {
  private origins = new Set<string>();
  private readAt = 0;
  private reading?: Promise<void>;

  constructor(private readonly db: Database) {}

  async allows(origin: string): Promise<boolean> {
    const age = Date.now() - this.readAt;
    if (age > REFRESH_MS || (!this.origins.has(origin) && age > MISS_REFRESH_MS)) await this.refresh();
    return this.origins.has(origin);
  }

  private refresh(): Promise<void> {
    this.reading ??= (async () => {
      const rows = await this.db
        .selectDistinct({ uri: sql<string>`jsonb_array_elements_text(${identityApps.redirectUris})` })
        .from(identityApps);
      const origins = new Set<string>();
      for (const { uri } of rows) {
        try {
          origins.add(new URL(uri).origin);
        } catch {
          // stored URIs were validated when registered
        }
      }
      this.origins = origins;
      this.readAt = Date.now();
    })().finally(() => (this.reading = undefined));
    return this.reading;
  }
}

/**
 * CORS for browser apps, on the API (sdk/browser-auth: token exchange, run API, streams) and on the
 * login host (OIDC libraries fetch discovery, the JWKS and the token endpoint from the app's page):
 * a request whose Origin is that of a registered redirect URI may read the answer and send
 * Authorization (bearer tokens, never cookies: no credentials mode). Preflights from those origins
 * are answered here; anything else passes through without CORS headers. This admits every app's
 * origin, since a preflight names no client: the token endpoints hold each code to its own app's
 * origins (redeemCode), so one app's page cannot redeem another's codes.
 */
export function appCors(origins: AppOrigins, skip: (path: string) => boolean = () => false) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || skip(req.path)) return next();
    try {
      if (!(await origins.allows(origin))) return next();
    } catch (err) {
      return next(err);
    }
    res.vary('Origin');
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After, Idempotent-Replayed, WWW-Authenticate');
    if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return next();
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
