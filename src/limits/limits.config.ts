/** Every limit the API enforces, from the environment; the README's Limits table lists them. */
export interface LimitsConfig {
  /** Requests per minute; 0 turns a limit off. */
  startsPerMinuteOrg: number;
  startsPerMinuteToken: number;
  readsPerMinuteOrg: number;
  readsPerMinuteToken: number;
  initialDataMaxBytes: number;
  initialDataMaxDepth: number;
  /** Objects and arrays nested in any JSON request body, checked before anything else reads it. */
  bodyMaxDepth: number;
  streamsPerToken: number;
  /** POSTs to one webhook ingress endpoint per minute (it carries no token to count by). */
  ingressPerMinuteEndpoint: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export function loadLimits(env: NodeJS.ProcessEnv): LimitsConfig {
  const bodyMaxDepth = int(env, 'BODY_MAX_DEPTH', 64);
  // Unlike the rate limits, this one cannot be turned off: it is what keeps later walks over a body bounded.
  if (bodyMaxDepth < 1) throw new Error('BODY_MAX_DEPTH must be at least 1');
  return {
    startsPerMinuteOrg: int(env, 'RATE_LIMIT_STARTS_PER_MINUTE_ORG', 1_200),
    startsPerMinuteToken: int(env, 'RATE_LIMIT_STARTS_PER_MINUTE_TOKEN', 600),
    readsPerMinuteOrg: int(env, 'RATE_LIMIT_READS_PER_MINUTE_ORG', 12_000),
    readsPerMinuteToken: int(env, 'RATE_LIMIT_READS_PER_MINUTE_TOKEN', 6_000),
    initialDataMaxBytes: int(env, 'INITIAL_DATA_MAX_BYTES', 65_536),
    initialDataMaxDepth: int(env, 'INITIAL_DATA_MAX_DEPTH', 16),
    bodyMaxDepth,
    streamsPerToken: int(env, 'SSE_MAX_STREAMS_PER_TOKEN', 100),
    ingressPerMinuteEndpoint: int(env, 'RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT', 600),
  };
}
