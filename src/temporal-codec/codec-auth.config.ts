/**
 * How /api/temporal-codec authenticates its callers (TEMPORAL_CODEC_AUTH).
 * - token: org-member bearer tokens, like every /api route.
 * - loopback: additionally, a request from a loopback address whose Origin is a
 *   Temporal UI origin needs no token (the local operator's own UI under make up).
 * - jwt: the bearer token the UI forwards (passAccessToken), verified against an OIDC issuer.
 */
export type CodecAuthMode = 'token' | 'loopback' | 'jwt';

export interface CodecJwtSettings {
  issuer: string;
  audience: string;
  /** Where the issuer's signing keys are; undefined reads jwks_uri from the issuer's discovery document. */
  jwksUrl?: string;
}

export interface CodecAuthSettings {
  mode: CodecAuthMode;
  jwt?: CodecJwtSettings;
}

const MODES: readonly CodecAuthMode[] = ['token', 'loopback', 'jwt'];

function absoluteUrl(name: string, raw: string, protocols: string[]): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) throw new Error(`${name} must be an ${protocols.join(' or ')} URL, got "${raw}"`);
  return raw;
}

export function parseCodecAuth(env: NodeJS.ProcessEnv): CodecAuthSettings {
  const raw = env.TEMPORAL_CODEC_AUTH || 'token';
  if (!MODES.includes(raw as CodecAuthMode)) {
    throw new Error(`TEMPORAL_CODEC_AUTH must be one of ${MODES.join(', ')}, got "${raw}"`);
  }
  const mode = raw as CodecAuthMode;
  if (mode !== 'jwt') return { mode };
  const issuer = env.TEMPORAL_CODEC_JWT_ISSUER;
  const audience = env.TEMPORAL_CODEC_JWT_AUDIENCE;
  if (!issuer) throw new Error('TEMPORAL_CODEC_AUTH=jwt needs TEMPORAL_CODEC_JWT_ISSUER (the OIDC issuer URL)');
  if (!audience) throw new Error('TEMPORAL_CODEC_AUTH=jwt needs TEMPORAL_CODEC_JWT_AUDIENCE (the audience the UI\'s tokens are issued for)');
  const jwksUrl = env.TEMPORAL_CODEC_JWT_JWKS_URL || undefined;
  return {
    mode,
    jwt: {
      issuer: absoluteUrl('TEMPORAL_CODEC_JWT_ISSUER', issuer, ['https:', 'http:']),
      audience,
      jwksUrl: jwksUrl && absoluteUrl('TEMPORAL_CODEC_JWT_JWKS_URL', jwksUrl, ['https:', 'http:']),
    },
  };
}
