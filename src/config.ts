import path from 'node:path';
import proxyAddr from 'proxy-addr';
import { originOf } from '../activities/origin';
import { parseAllowHttpHosts } from '../activities/outbound';
import { DEFAULT_TOLERANCE_SECONDS } from '../activities/payments-signature';
import { type OutboundAllowList, parseOutboundAllow } from '../activities/outbound-allow';
import { projectRoot } from '../db/client';
import { VISIBLE_ASCII, VISIBLE_ASCII_MESSAGE } from '../workflows/runtime/bearer-token';
import { type AccountsConfig, loadAccountsConfig } from './accounts/accounts.config';
import { type LimitsConfig, loadLimits } from './limits/limits.config';
import { type CodecAuthSettings, parseCodecAuth } from './temporal-codec/codec-auth.config';
import { parseTracing, type TracingSettings } from './telemetry/tracing';
import { parseTemporalTls, type TemporalTlsSettings } from './temporal-tls';
import { envInteger } from './common/env-integer';

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
  /** TLS (mutual with a certificate pair) for every connection to Temporal; undefined is plain TCP. */
  temporalTls?: TemporalTlsSettings;
  temporalUiUrl: string;
  /** Origins (scheme://host[:port]) of Temporal UIs allowed to call /api/temporal-codec from the browser. */
  temporalUiOrigins: string[];
  /** Operator organizations: their members decode every organization's payloads at /api/temporal-codec. */
  codecOrganizations: string[];
  /** How callers of /api/temporal-codec authenticate (TEMPORAL_CODEC_AUTH). */
  codecAuth: CodecAuthSettings;
  allowHttpHosts: string[];
  /** Non-public destinations provider calls may reach (OUTBOUND_ALLOW); nothing inward otherwise. */
  outboundAllow: OutboundAllowList;
  esignApiToken?: string;
  /** The e-signature API root esignApiToken belongs to: the only origin it is sent to. */
  esignApiBaseUrl?: string;
  providerTimeoutMs: number;
  /** How far a payment webhook's signed timestamp may be from now, either way (PAYMENTS_WEBHOOK_TOLERANCE_SECONDS). */
  paymentsWebhookToleranceSeconds: number;
  /** The API's base URL as senders reach it: ingress URLs are built on it, and hook.receive-webhook posts there. */
  publicApiUrl: string;
  bodyLimitBytes: number;
  /** Express's `trust proxy`: which proxies' X-Forwarded-For names the client address; undefined trusts none. */
  trustProxy?: number | string;
  sseKeepAliveMs: number;
  /** How long a resolved bearer token is trusted without asking the database; 0 asks every time. */
  tokenCacheTtlMs: number;
  /** How often each API process looks for runs whose execution Temporal closed without them (src/runs/closed-runs.ts); 0 never. */
  closedRunSweepSeconds: number;
  /** How far back the first of those sweeps looks, for executions closed while no API process ran. */
  closedRunLookbackSeconds: number;
  /** SIGTERM: how long in-flight activities may finish before they are cancelled (see shutdown.ts). */
  shutdownGraceMs: number;
  /** `all` mode: the nice value of the threads that execute runs (src/worker/run-thread-priority.ts); 0 leaves them. */
  runThreadsNice: number;
  logLevel: string;
  /** OpenTelemetry traces over OTLP/HTTP; undefined is off. */
  tracing?: TracingSettings;
  devBootstrap: boolean;
  limits: LimitsConfig;
  /** End-user accounts: mail and sign-in throttling. */
  accounts: AccountsConfig;
  /** End-user sign-in (README, End-user sign-in). */
  identity: IdentityConfig;
}

export interface IdentityConfig {
  /** The login host's own listener (LOGIN_PORT, default PORT + 1). */
  loginPort: number;
  /** The login host's public origin: the issuer of end-user tokens (LOGIN_URL). */
  loginUrl: string;
  endUserTokenTtlS: number;
  loginSessionTtlS: number;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function parseIdentity(env: NodeJS.ProcessEnv, port: number): IdentityConfig {
  const loginPort = envInteger(env, 'LOGIN_PORT', port + 1);
  const loginUrl = (env.LOGIN_URL || `http://127.0.0.1:${loginPort}`).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(loginUrl);
  } catch {
    throw new Error(`LOGIN_URL must be an absolute http(s) URL, got "${loginUrl}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new Error(`LOGIN_URL must be an http(s) URL without query or fragment, got "${loginUrl}"`);
  }
  // Passwords are typed there and its session cookie is Secure only on https: plain http is for a
  // login host on this machine, as it is for redirect URIs.
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new Error(`LOGIN_URL must be https, or http on a loopback host (127.0.0.1, [::1], localhost), got "${loginUrl}"`);
  }
  const endUserTokenTtlS = envInteger(env, 'END_USER_TOKEN_TTL_S', 600);
  if (endUserTokenTtlS < 1) throw new Error('END_USER_TOKEN_TTL_S must be at least 1');
  return { loginPort, loginUrl, endUserTokenTtlS, loginSessionTtlS: envInteger(env, 'LOGIN_SESSION_TTL_S', 7 * 24 * 3600) };
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

/**
 * The platform's e-signature token is sent only to the origin configured beside it, so a
 * token without that origin would never be used: refused at start rather than ignored.
 */
function esignFallback(env: NodeJS.ProcessEnv): Pick<AppConfig, 'esignApiToken' | 'esignApiBaseUrl'> {
  const token = env.ESIGN_API_TOKEN || undefined;
  const baseUrl = env.ESIGN_API_BASE_URL || undefined;
  if (baseUrl && !originOf(baseUrl)) throw new Error(`ESIGN_API_BASE_URL must be an absolute http(s) URL, got "${baseUrl}"`);
  if (token && !baseUrl) throw new Error('ESIGN_API_TOKEN is set without ESIGN_API_BASE_URL, the only origin it may be sent to');
  if (token && !VISIBLE_ASCII.test(token)) throw new Error(`ESIGN_API_TOKEN ${VISIBLE_ASCII_MESSAGE}`);
  return { esignApiToken: token, esignApiBaseUrl: baseUrl };
}

/** PUBLIC_API_URL: an origin, with a path prefix at most (a proxy mounting the API below one). */
function publicApiUrl(env: NodeJS.ProcessEnv, port: number): string {
  const url = env.PUBLIC_API_URL || `http://127.0.0.1:${port}`;
  if (!originOf(url) || new URL(url).search || new URL(url).hash) throw new Error(`PUBLIC_API_URL must be an absolute http(s) URL, got "${url}"`);
  return url.replace(/\/+$/, '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const dataDir = path.resolve(projectRoot(), env.DATA_DIR || '.data');
  const port = envInteger(env, 'PORT', 3000);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseQueryTimeoutMs: envInteger(env, 'DATABASE_QUERY_TIMEOUT_MS', 5_000),
    dataDir,
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalTls: parseTemporalTls(env),
    temporalUiUrl: env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233',
    temporalUiOrigins: parseOrigins(env.TEMPORAL_UI_ORIGINS || 'http://127.0.0.1:8233,http://localhost:8233'),
    codecOrganizations: (env.TEMPORAL_CODEC_ORGANIZATIONS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    codecAuth: parseCodecAuth(env),
    allowHttpHosts: parseAllowHttpHosts(env.ALLOW_HTTP_HOSTS),
    outboundAllow: parseOutboundAllow(env.OUTBOUND_ALLOW),
    ...esignFallback(env),
    providerTimeoutMs: envInteger(env, 'PROVIDER_TIMEOUT_MS', 10_000),
    paymentsWebhookToleranceSeconds: envInteger(env, 'PAYMENTS_WEBHOOK_TOLERANCE_SECONDS', DEFAULT_TOLERANCE_SECONDS),
    publicApiUrl: publicApiUrl(env, port),
    bodyLimitBytes: envInteger(env, 'BODY_LIMIT_BYTES', 1_048_576),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    sseKeepAliveMs: envInteger(env, 'SSE_KEEPALIVE_MS', 15_000),
    tokenCacheTtlMs: envInteger(env, 'TOKEN_CACHE_TTL_MS', 5_000),
    closedRunSweepSeconds: envInteger(env, 'CLOSED_RUN_SWEEP_SECONDS', 15),
    closedRunLookbackSeconds: envInteger(env, 'CLOSED_RUN_LOOKBACK_SECONDS', 7 * 24 * 3600),
    shutdownGraceMs: envInteger(env, 'SHUTDOWN_GRACE_MS', 5_000),
    runThreadsNice: runThreadsNice(env),
    logLevel: env.LOG_LEVEL || 'info',
    tracing: parseTracing(env),
    devBootstrap: env.DEV_BOOTSTRAP === '1',
    limits: loadLimits(env),
    accounts: loadAccountsConfig(env, dataDir),
    identity: parseIdentity(env, port),
  };
}

/**
 * A hop count ("1": the nearest proxy) or Express's names and addresses ("loopback",
 * "10.0.0.0/8, 127.0.0.1"). "true" (every proxy) is refused: any client could then name its own
 * address in X-Forwarded-For and escape the per-client limits.
 */
function parseTrustProxy(raw: string | undefined): number | string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  if (value === 'true' || value === '*') throw new Error('TRUST_PROXY must name the proxies to trust (a hop count, "loopback", addresses or CIDRs), not all of them');
  const entries = value.split(',').map((entry) => entry.trim());
  try {
    // Express compiles the setting with proxy-addr; compiling it here refuses the same values, naming the variable.
    proxyAddr.compile(entries);
  } catch (err) {
    throw new Error(`TRUST_PROXY: ${(err as Error).message} (expected a hop count, "loopback", "linklocal", "uniquelocal", addresses or CIDRs, comma-separated)`);
  }
  return value;
}

/** RUN_THREADS_NICE: a nice value a process may give its own threads without privilege, 0 to 19. */
function runThreadsNice(env: NodeJS.ProcessEnv): number {
  const nice = envInteger(env, 'RUN_THREADS_NICE', 0);
  if (nice > 19) throw new Error(`RUN_THREADS_NICE must be 0 to 19, got "${env.RUN_THREADS_NICE}"`);
  return nice;
}

export const pgliteDir = (config: AppConfig) => path.join(config.dataDir, 'pglite');
export const adminSocketPath = (config: AppConfig) => path.join(config.dataDir, 'admin.sock');
