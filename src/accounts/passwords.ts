import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * scrypt (memory-hard, RFC 7914) at N=2^15, r=8, p=1: 32 MiB and roughly 50-100 ms per hash on
 * one core, OWASP's minimum for scrypt. The parameters are stored with each hash, so raising
 * them later leaves existing hashes verifiable.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** NIST SP 800-63B: 8 to 256 characters, no composition rules; counted in code points. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
export const passwordSchema = z
  .string()
  .refine((p) => [...p].length >= PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`)
  .refine((p) => [...p].length <= PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`)
  // JSON Schema counts lengths in code points too: the OpenAPI document states the same rule.
  .meta({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; node's default ceiling (32 MiB) is exactly that, too tight.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  // Normalised so that one password typed on two keyboards (composed or decomposed) is one password.
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/**
 * Spends the time a real verification takes when there is no account to check against, so
 * the response time does not tell whether an email is registered.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await decoy);
  return false;
}
