import path from 'node:path';
import { parseAllowHttpHosts } from '../activities/outbound';
import { projectRoot } from '../db/client';
import { type LimitsConfig, loadLimits } from './limits/limits.config';

/** Every setting the service reads, from the environment. The README lists them all. */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl?: string;
  /** Postgres: a query unanswered this long fails (503 at the API) instead of holding a request. */
  databaseQueryTimeoutMs: number;
  dataDir: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  /** Origins (scheme://host[:port]) of Temporal UIs allowed to call /api/temporal-codec from the browser. */
  temporalUiOrigins: string[];
  /** Organizations whose members may use /api/temporal-codec; empty means every organization's. */
  codecOrganizations: string[];
  allowHttpHosts: string[];
  esignApiToken?: string;
  providerTimeoutMs: number;
  bodyLimitBytes: number;
  sseKeepAliveMs: number;
  /** How long a resolved bearer token is trusted without asking the database; 0 asks every time. */
  tokenCacheTtlMs: number;
  /** SIGTERM: how long in-flight activities may finish before they are cancelled (see shutdown.ts). */
  shutdownGraceMs: number;
  logLevel: string;
  devBootstrap: boolean;
  limits: LimitsConfig;
}

function int(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** Comma-separated origins, each exactly `scheme://host[:port]` as a browser sends it in `Origin`. */
function parseOrigins(raw: string): string[] {
  return raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((origin) => {
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        throw new Error(`TEMPORAL_UI_ORIGINS: "${origin}" is not an origin (scheme://host[:port])`);
      }
      const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
      if (!['http:', 'https:'].includes(url.protocol) || !bare) {
        throw new Error(`TEMPORAL_UI_ORIGINS: "${origin}" is not an origin (scheme://host[:port], no path)`);
      }
      return url.origin;
    });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const dataDir = path.resolve(projectRoot(), env.DATA_DIR || '.data');
  return {
    port: int('PORT', 3000, env),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseQueryTimeoutMs: int('DATABASE_QUERY_TIMEOUT_MS', 5_000, env),
    dataDir,
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalUiUrl: env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233',
    temporalUiOrigins: parseOrigins(env.TEMPORAL_UI_ORIGINS || 'http://127.0.0.1:8233,http://localhost:8233'),
    codecOrganizations: (env.TEMPORAL_CODEC_ORGANIZATIONS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    allowHttpHosts: parseAllowHttpHosts(env.ALLOW_HTTP_HOSTS),
    esignApiToken: env.ESIGN_API_TOKEN || undefined,
    providerTimeoutMs: int('PROVIDER_TIMEOUT_MS', 10_000, env),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1_048_576, env),
    sseKeepAliveMs: int('SSE_KEEPALIVE_MS', 15_000, env),
    tokenCacheTtlMs: int('TOKEN_CACHE_TTL_MS', 5_000, env),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 5_000, env),
    logLevel: env.LOG_LEVEL || 'info',
    devBootstrap: env.DEV_BOOTSTRAP === '1',
    limits: loadLimits(env),
  };
}

export const pgliteDir = (config: AppConfig) => path.join(config.dataDir, 'pglite');
export const adminSocketPath = (config: AppConfig) => path.join(config.dataDir, 'admin.sock');
