import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import type { CodecJwtSettings } from './codec-auth.config';

export class CodecJwtRejected extends Error {}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * Verifies bearer tokens issued by the configured OIDC issuer: signature against the
 * issuer's JWKS (fetched and cached by jose, refetched when a token names an unknown key),
 * issuer, audience and expiry.
 */
export class CodecJwtVerifier {
  private keys?: Promise<KeySet>;

  constructor(private readonly settings: CodecJwtSettings) {}

  async verify(token: string): Promise<JWTPayload> {
    const keys = await this.keySet();
    try {
      const { payload } = await jwtVerify(token, keys, { issuer: this.settings.issuer, audience: this.settings.audience });
      return payload;
    } catch (err) {
      if (err instanceof errors.JOSEError) throw new CodecJwtRejected(`token rejected: ${err.code}`);
      throw err;
    }
  }

  private keySet(): Promise<KeySet> {
    this.keys ??= this.jwksUrl().then((url) => createRemoteJWKSet(new URL(url)));
    // A failed discovery is retried on the next request rather than remembered.
    this.keys.catch(() => (this.keys = undefined));
    return this.keys;
  }

  private async jwksUrl(): Promise<string> {
    if (this.settings.jwksUrl) return this.settings.jwksUrl;
    const discovery = `${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(discovery, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`OIDC discovery ${discovery} answered ${res.status}`);
    const body = (await res.json()) as { jwks_uri?: unknown };
    if (typeof body.jwks_uri !== 'string') throw new Error(`OIDC discovery ${discovery} has no jwks_uri`);
    return body.jwks_uri;
  }
}
