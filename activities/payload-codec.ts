import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { PLATFORM_OWNER, VERIFIED_ORGANIZATION_METADATA } from '../workflows/runtime/organization-binding';
import { MasterPayloadKeys, ORGANIZATION_ID, OrganizationPayloadKey, type PayloadKeys } from './payload-keys';
import { RunOrganizations } from './run-organizations';

/**
 * Temporal payload encryption: every payload a client or the worker hands to
 * Temporal (workflow inputs and results, activity and local activity inputs and
 * results, failure details, memo, signals, queries) is serialized whole
 * (metadata included, so not even the original encoding is visible), sealed with
 * AES-256-GCM and replaced by a payload whose metadata says `encoding:
 * binary/encrypted`, names the key (`encryption-key-id`) and the organization it
 * belongs to (`encryption-organization`). The organization's own key seals it
 * (HKDF from ENGINE_SECRET_KEY over the organization id) and the organization id is
 * the AES-GCM additional data: relabelling a payload breaks its authentication.
 * A payload without `encryption-organization` is a platform payload, sealed with
 * the master key's `temporal-payloads` key (the only format before organizations
 * were bound; it still decodes). Codecs run outside the workflow sandbox; search
 * attributes and headers stay in clear.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
export const ORGANIZATION_METADATA = 'encryption-organization';

/** The organization a payload belongs to; null for a platform payload. */
export type PayloadOwner = string | null;

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);
const additionalData = (organization: string) => Buffer.from(`workflow-engine/temporal-payload\0${organization}`);

/** Why a payload could not be decrypted; its message never contains payload data. */
export class PayloadDecryptionError extends Error {
  constructor(
    readonly reason: 'unknown_key_id' | 'missing_key_id' | 'authentication_failed' | 'malformed' | 'foreign_organization',
    message: string,
  ) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

export const isEncryptedPayload = (payload: Payload) => utf8(payload.metadata?.encoding) === ENCRYPTED_ENCODING;

/** The owner an encrypted payload's metadata claims; authenticated only once openPayload succeeds. */
export function claimedOwner(payload: Payload): PayloadOwner {
  const organization = utf8(payload.metadata?.[ORGANIZATION_METADATA]);
  if (organization === undefined) return null;
  if (!ORGANIZATION_ID.test(organization)) {
    throw new PayloadDecryptionError('malformed', `${ORGANIZATION_METADATA} is not an organization id`);
  }
  return organization;
}

export function sealPayload(keys: PayloadKeys, owner: PayloadOwner, payload: Payload): Payload {
  const [box] = owner === null ? keys.platformBoxes() : keys.organizationBoxes(owner);
  if (!box) throw new Error(`no key to encrypt payloads of ${owner ?? 'the platform'}`);
  const plain = Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish());
  const metadata: Record<string, Uint8Array> = {
    encoding: Buffer.from(ENCRYPTED_ENCODING),
    [KEY_ID_METADATA]: Buffer.from(box.keyId),
  };
  if (owner !== null) metadata[ORGANIZATION_METADATA] = Buffer.from(owner);
  return { metadata, data: box.seal(plain, owner === null ? undefined : additionalData(owner)) };
}

/** Decrypts an encrypted payload and says whose it is. */
export function openPayload(keys: PayloadKeys, payload: Payload): { payload: Payload; owner: PayloadOwner } {
  const owner = claimedOwner(payload);
  const keyId = utf8(payload.metadata?.[KEY_ID_METADATA]);
  if (!keyId) throw new PayloadDecryptionError('missing_key_id', `encrypted payload carries no ${KEY_ID_METADATA}`);
  const boxes = owner === null ? keys.platformBoxes() : keys.organizationBoxes(owner);
  const box = boxes.find((b) => b.keyId === keyId);
  if (!box) {
    throw new PayloadDecryptionError(
      'unknown_key_id',
      `payload (${owner ?? 'platform'}) encrypted with key id ${keyId}, which this process does not hold (it has ${boxes.map((b) => b.keyId).join(', ') || 'none for it'}): ` +
        'ENGINE_SECRET_KEY (or the organization key) differs from the key that encrypted it',
    );
  }
  let plain: Buffer;
  try {
    plain = box.open(Buffer.from(payload.data ?? new Uint8Array()), owner === null ? undefined : additionalData(owner));
  } catch {
    throw new PayloadDecryptionError('authentication_failed', `encrypted payload (key id ${keyId}) failed authentication: altered, truncated or relabelled`);
  }
  try {
    return { payload: temporal.api.common.v1.Payload.decode(plain), owner };
  } catch {
    throw new PayloadDecryptionError('malformed', `decrypted payload (key id ${keyId}) is not a Temporal Payload`);
  }
}

/**
 * A codec acting for one organization: it encrypts under that organization and
 * decrypts only that organization's payloads (and, for the API, which holds the
 * master key, platform payloads written before organizations were bound).
 */
export class OrganizationCodec implements PayloadCodec {
  constructor(
    private readonly keys: PayloadKeys,
    readonly organization: string,
    private readonly acceptPlatform = false,
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => sealPayload(this.keys, this.organization, p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if (!isEncryptedPayload(p)) return p;
      const owner = claimedOwner(p);
      if (owner !== this.organization && !(owner === null && this.acceptPlatform)) {
        throw new PayloadDecryptionError('foreign_organization', `payload belongs to ${owner ?? 'the platform'}, not to ${this.organization}`);
      }
      return openPayload(this.keys, p).payload;
    });
  }
}

/**
 * The worker's codec (and any holder of the master key): decrypts every
 * organization's payloads and encrypts what it writes for a run under that run's
 * organization, found from the serialization context (see RunOrganizations).
 * Every payload it decodes carries VERIFIED_ORGANIZATION_METADATA, the owner its
 * encryption proved (a payload that came in clear carries none), which the
 * workflow compares with the organization its input claims.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(
    private readonly keys: PayloadKeys,
    private readonly runs = new RunOrganizations(),
  ) {}

  static fromMasterKey(masterKey: Buffer, previousMasterKeys: Buffer[] = []): EncryptionCodec {
    return new EncryptionCodec(new MasterPayloadKeys(masterKey, previousMasterKeys));
  }

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const owner = this.runs.ownerFor(context);
    return payloads.map((p) => sealPayload(this.keys, owner, p));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return payloads.map((p) => {
      if (!isEncryptedPayload(p)) {
        this.runs.observe(context, null);
        return withoutVerifiedOrganization(p);
      }
      const { payload, owner } = openPayload(this.keys, p);
      this.runs.observe(context, owner);
      return { ...payload, metadata: { ...payload.metadata, [VERIFIED_ORGANIZATION_METADATA]: Buffer.from(owner ?? PLATFORM_OWNER) } };
    });
  }
}

/** Only this codec's decryption may say whose a payload is: a claim arriving in clear is dropped. */
function withoutVerifiedOrganization(payload: Payload): Payload {
  if (!payload.metadata || !(VERIFIED_ORGANIZATION_METADATA in payload.metadata)) return payload;
  const { [VERIFIED_ORGANIZATION_METADATA]: _claim, ...metadata } = payload.metadata;
  return { ...payload, metadata };
}

/** Runs inside the workflow sandbox, so a prebuilt workflow bundle must hold it too. */
export const PAYLOAD_CONVERTER_PATH = require.resolve('../workflows/payload-converter');

/**
 * The data converter of the service's worker, and of anything holding the master
 * key: `Worker.create({ dataConverter })`, `Worker.runReplayHistory`. The payload
 * converter hands the verified organization to the workflow (workflows/payload-converter).
 */
export function createDataConverter(masterKey: Buffer, previousMasterKeys: Buffer[] = []): DataConverter {
  return {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    payloadCodecs: [EncryptionCodec.fromMasterKey(masterKey, previousMasterKeys)],
  };
}

/**
 * The data converter of a service starting runs for one organization with the
 * Temporal client: `key` is that organization's key (`npm run cli -- codec-key --org <id>`).
 */
export function createOrganizationDataConverter(organization: string, key: Buffer): DataConverter {
  return { payloadCodecs: [new OrganizationCodec(new OrganizationPayloadKey(organization, key), organization)] };
}
