import { createCipheriv, createDecipheriv, createHash, createSecretKey, hkdfSync, type KeyObject, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * AES-256-GCM with keys derived (HKDF-SHA256) from the one master key,
 * ENGINE_SECRET_KEY: one key per purpose, so connection secrets and Temporal
 * payloads never share a key.
 */
export type KeyPurpose = 'connections' | 'temporal-payloads' | 'hook-secrets' | 'signing-keys' | 'end-user-totp' | 'login-flow' | 'login-csrf';

/** The 32-byte key for one purpose. */
export const deriveKey = (master: Buffer, purpose: KeyPurpose): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `workflow-engine/${purpose}`, 32));

export class SecretBox {
  readonly keyId: string;
  /** Imported once: a cipher given the raw bytes imports them again each time (3× the cost of a seal). */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 16);
    this.key = createSecretKey(key);
  }

  static derive(master: Buffer, purpose: KeyPurpose): SecretBox {
    return new SecretBox(deriveKey(master, purpose));
  }

  /**
   * One organization's Temporal payload key: what a service starting runs for that
   * organization holds (`cli codec-key`). HKDF is one-way, so it yields neither the
   * master key nor any other organization's key.
   */
  static organizationPayloadKey(master: Buffer, organization: string): Buffer {
    return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `workflow-engine/temporal-payloads/organization/${organization}`, 32));
  }

  /** iv (12) | tag (16) | ciphertext; `aad` binds the ciphertext to where it belongs. */
  seal(plaintext: Buffer, aad?: Buffer): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (aad) cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, aad?: Buffer): Buffer {
    if (sealed.length < 28) throw new Error('sealed value too short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, 12));
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(12, 28));
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  }
}

function parseKey(value: string, source: string): Buffer {
  const trimmed = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error(`${source} must be 32 bytes, as 64 hex characters or base64`);
  return key;
}

/**
 * The master key: ENGINE_SECRET_KEY, else DATA_DIR/secret.key. `make up`
 * (generateIfMissing) creates that file with mode 0600 on first start;
 * anywhere else a missing key is an error, never a silent default.
 */
export function loadMasterKey(env: NodeJS.ProcessEnv, dataDir: string, generateIfMissing: boolean): Buffer {
  if (env.ENGINE_SECRET_KEY) return parseKey(env.ENGINE_SECRET_KEY, 'ENGINE_SECRET_KEY');
  const file = path.join(dataDir, 'secret.key');
  if (fs.existsSync(file)) return parseKey(fs.readFileSync(file, 'utf8'), file);
  if (!generateIfMissing) {
    throw new Error(`ENGINE_SECRET_KEY is not set and ${file} does not exist (generate one: openssl rand -hex 32)`);
  }
  const key = randomBytes(32);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600 });
  return key;
}
