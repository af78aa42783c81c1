import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as authenticator apps implement it: HMAC-SHA-1, 6 digits, 30 s steps. */
const PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

/** 160 random bits (RFC 4226's recommended length), base32 as authenticator apps take it. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

export const otpauthUri = (secret: string, issuer: string, label: string): string =>
  new TOTP({ ...PARAMS, issuer, label, secret: Secret.fromBase32(secret) }).toString();

export const totpCode = (secret: string, timestamp = Date.now()): string =>
  TOTP.generate({ ...PARAMS, secret: Secret.fromBase32(secret), timestamp });

/**
 * The time step (RFC 6238's T) the code belongs to, undefined when it is no current code. One
 * step either side is accepted: a phone's clock drifts and a code takes a moment to type.
 */
export function totpStep(secret: string, code: unknown, timestamp = Date.now()): number | undefined {
  if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return undefined;
  const delta = TOTP.validate({ ...PARAMS, token: code, secret: Secret.fromBase32(secret), timestamp, window: 1 });
  return delta === null ? undefined : TOTP.counter({ period: PARAMS.period, timestamp }) + delta;
}
