import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SecretBox } from './secret-box';

/**
 * Temporal payload encryption: every payload the client or the worker hands to
 * Temporal (workflow inputs and results, activity and local activity inputs and
 * results, failure details, memo, signals, queries) is serialized whole
 * (metadata included, so not even the original encoding is visible), sealed with
 * AES-256-GCM under the `temporal-payloads` key derived from ENGINE_SECRET_KEY,
 * and replaced by a payload whose metadata says `encoding: binary/encrypted` and
 * names the key (`encryption-key-id`). Codecs run outside the workflow sandbox,
 * so the workflow bundle is the same with or without it. Search attributes stay
 * in clear: the server indexes them.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

/** Why a payload could not be decrypted; its message never contains payload data. */
export class PayloadDecryptionError extends Error {
  constructor(
    readonly reason: 'unknown_key_id' | 'missing_key_id' | 'authentication_failed' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

export const isEncryptedPayload = (payload: Payload) => utf8(payload.metadata?.encoding) === ENCRYPTED_ENCODING;

export class EncryptionCodec implements PayloadCodec {
  private readonly boxes = new Map<string, SecretBox>();

  /**
   * `current` encrypts; it and every box in `decryptOnly` (keys being rotated
   * out) decrypt, each found by the key id the payload names.
   */
  constructor(
    private readonly current: SecretBox,
    decryptOnly: SecretBox[] = [],
  ) {
    for (const box of [current, ...decryptOnly]) this.boxes.set(box.keyId, box);
  }

  static fromMasterKey(masterKey: Buffer, previousMasterKeys: Buffer[] = []): EncryptionCodec {
    return new EncryptionCodec(
      SecretBox.derive(masterKey, 'temporal-payloads'),
      previousMasterKeys.map((key) => SecretBox.derive(key, 'temporal-payloads')),
    );
  }

  get keyId(): string {
    return this.current.keyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encodeOne(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decodeOne(p));
  }

  encodeOne(payload: Payload): Payload {
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    return {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(this.current.keyId),
      },
      data: this.current.seal(Buffer.from(plain)),
    };
  }

  /** Payloads this codec did not encrypt (another encoding) come back unchanged. */
  decodeOne(payload: Payload): Payload {
    if (!isEncryptedPayload(payload)) return payload;
    const keyId = utf8(payload.metadata?.[KEY_ID_METADATA]);
    if (!keyId) throw new PayloadDecryptionError('missing_key_id', `encrypted payload carries no ${KEY_ID_METADATA}`);
    const box = this.boxes.get(keyId);
    if (!box) {
      throw new PayloadDecryptionError(
        'unknown_key_id',
        `payload encrypted with key id ${keyId}, which this process does not hold (it has ${[...this.boxes.keys()].join(', ')}): ` +
          'ENGINE_SECRET_KEY differs from the key that encrypted it',
      );
    }
    let plain: Buffer;
    try {
      plain = box.open(Buffer.from(payload.data ?? new Uint8Array()));
    } catch {
      throw new PayloadDecryptionError('authentication_failed', `encrypted payload (key id ${keyId}) failed authentication: altered or truncated`);
    }
    try {
      return temporal.api.common.v1.Payload.decode(plain);
    } catch {
      throw new PayloadDecryptionError('malformed', `decrypted payload (key id ${keyId}) is not a Temporal Payload`);
    }
  }
}

/**
 * The data converter of every Temporal client and worker of the service:
 * `new Client({ dataConverter })`, `Worker.create({ dataConverter })`.
 */
export function createDataConverter(masterKey: Buffer, previousMasterKeys: Buffer[] = []): DataConverter {
  return { payloadCodecs: [EncryptionCodec.fromMasterKey(masterKey, previousMasterKeys)] };
}
