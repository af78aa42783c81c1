import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, ne, or } from 'drizzle-orm';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import type { SecretBox } from '../../activities/secret-box';
import type { Database } from '../../db/client';
import { signingKeys } from '../../db/schema';

export const SIGNING_ALG = 'RS256';

/** Keys are re-read this often, so a rotation by another process (`cli keys rotate`) is picked up. */
const RELOAD_MS = 30_000;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  createdAt: Date;
  retiredAt: Date | null;
}

const aad = (kid: string) => Buffer.from(`signing-key:${kid}`);

/**
 * The login host's RS256 keys. The newest unretired key signs; a retired key still verifies (and
 * stays in the JWKS) until every token it signed has expired. Private keys are stored sealed with
 * the master key's signing-keys key (activities/secret-box.ts), bound to their kid.
 */
export class SigningKeys {
  private loaded?: { at: number; keys: LoadedKey[] };
  private signer?: { kid: string; key: CryptoKey };

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    /** How long a retired key keeps verifying: the longest a token lives. */
    private readonly verifyAfterRetirementMs: number,
  ) {}

  /** Makes a new signing key and retires the others; returns the new kid. */
  async rotate(): Promise<string> {
    const kid = await this.create();
    await this.db
      .update(signingKeys)
      .set({ retiredAt: new Date() })
      .where(and(isNull(signingKeys.retiredAt), ne(signingKeys.kid, kid)));
    this.loaded = undefined;
    this.signer = undefined;
    return kid;
  }

  /** The key to sign with, created on first use. */
  async signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    const keys = await this.keys();
    const current = keys.find((k) => !k.retiredAt);
    if (!current) {
      await this.create();
      this.loaded = undefined;
      return this.signingKey();
    }
    if (this.signer?.kid !== current.kid) {
      const [row] = await this.db.select().from(signingKeys).where(eq(signingKeys.kid, current.kid));
      const jwk = JSON.parse(this.box.open(Buffer.from(row.privateJwkCiphertext, 'base64'), aad(row.kid)).toString()) as JWK;
      this.signer = { kid: current.kid, key: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey };
    }
    return this.signer;
  }

  /** The public key of `kid` if it may verify now; an unknown kid re-reads the database once. */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    let key = (await this.keys()).find((k) => k.kid === kid);
    if (!key && this.loaded && Date.now() - this.loaded.at > 1_000) key = (await this.keys(true)).find((k) => k.kid === kid);
    return key?.verifyKey;
  }

  /** The JWKS: every key that may verify a live token. */
  async jwks(): Promise<{ keys: JWK[] }> {
    if (!(await this.keys()).length) await this.signingKey();
    return { keys: (await this.keys()).map((k) => k.publicJwk) };
  }

  private async create(): Promise<string> {
    const kid = randomBytes(12).toString('base64url');
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const sealed = this.box.seal(Buffer.from(JSON.stringify(await exportJWK(privateKey))), aad(kid));
    await this.db.insert(signingKeys).values({ kid, privateJwkCiphertext: sealed.toString('base64'), publicJwk });
    return kid;
  }

  private async keys(force = false): Promise<LoadedKey[]> {
    if (!force && this.loaded && Date.now() - this.loaded.at < RELOAD_MS) return this.loaded.keys;
    const horizon = new Date(Date.now() - this.verifyAfterRetirementMs);
    const rows = await this.db
      .select({ kid: signingKeys.kid, publicJwk: signingKeys.publicJwk, createdAt: signingKeys.createdAt, retiredAt: signingKeys.retiredAt })
      .from(signingKeys)
      .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, horizon)))
      .orderBy(desc(signingKeys.createdAt));
    const keys = await Promise.all(
      rows.map(async (r) => ({
        kid: r.kid,
        publicJwk: r.publicJwk as JWK,
        verifyKey: (await importJWK(r.publicJwk as JWK, SIGNING_ALG)) as CryptoKey,
        createdAt: r.createdAt,
        retiredAt: r.retiredAt,
      })),
    );
    this.loaded = { at: Date.now(), keys };
    return keys;
  }
}
