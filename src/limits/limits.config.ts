import { envInteger } from '../common/env-integer';

/** Every limit the API enforces, from the environment; the README's Limits table lists them. */
export interface LimitsConfig {
  /** Requests per minute; 0 turns a limit off. */
  startsPerMinuteOrg: number;
  startsPerMinuteToken: number;
  readsPerMinuteOrg: number;
  readsPerMinuteToken: number;
  /** What all end users of one app may start and read together, apart from the organization's members. */
  startsPerMinuteApp: number;
  readsPerMinuteApp: number;
  initialDataMaxBytes: number;
  initialDataMaxDepth: number;
  /** Objects and arrays nested in any JSON request body, checked before anything else reads it. */
  bodyMaxDepth: number;
  streamsPerToken: number;
  /** POSTs to one webhook ingress endpoint per minute (it carries no token to count by); verified deliveries only on the payments ingress. */
  ingressPerMinuteEndpoint: number;
  /** Refused (unverified) payments-ingress requests per client address per minute. */
  ingressRefusedPerMinuteClient: number;
}

export function loadLimits(env: NodeJS.ProcessEnv): LimitsConfig {
  const bodyMaxDepth = envInteger(env, 'BODY_MAX_DEPTH', 64);
  // Unlike the rate limits, this one cannot be turned off: it is what keeps later walks over a body bounded.
  if (bodyMaxDepth < 1) throw new Error('BODY_MAX_DEPTH must be at least 1');
  return {
    startsPerMinuteOrg: envInteger(env, 'RATE_LIMIT_STARTS_PER_MINUTE_ORG', 1_200),
    startsPerMinuteToken: envInteger(env, 'RATE_LIMIT_STARTS_PER_MINUTE_TOKEN', 600),
    readsPerMinuteOrg: envInteger(env, 'RATE_LIMIT_READS_PER_MINUTE_ORG', 12_000),
    readsPerMinuteToken: envInteger(env, 'RATE_LIMIT_READS_PER_MINUTE_TOKEN', 6_000),
    startsPerMinuteApp: envInteger(env, 'RATE_LIMIT_STARTS_PER_MINUTE_APP', 1_200),
    readsPerMinuteApp: envInteger(env, 'RATE_LIMIT_READS_PER_MINUTE_APP', 12_000),
    initialDataMaxBytes: envInteger(env, 'INITIAL_DATA_MAX_BYTES', 65_536),
    initialDataMaxDepth: envInteger(env, 'INITIAL_DATA_MAX_DEPTH', 16),
    bodyMaxDepth,
    streamsPerToken: envInteger(env, 'SSE_MAX_STREAMS_PER_TOKEN', 100),
    ingressPerMinuteEndpoint: envInteger(env, 'RATE_LIMIT_INGRESS_PER_MINUTE_ENDPOINT', 600),
    ingressRefusedPerMinuteClient: envInteger(env, 'RATE_LIMIT_INGRESS_REFUSED_PER_MINUTE_CLIENT', 60),
  };
}
