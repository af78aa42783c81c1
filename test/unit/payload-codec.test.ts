import { randomBytes } from 'node:crypto';
import { type Payload, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  createDataConverter,
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from '../../activities/payload-codec';
import { SecretBox } from '../../activities/secret-box';
import { VERIFIED_ORGANIZATION_METADATA } from '../../workflows/runtime/organization-binding';
import { SchemaValidationPipe } from '../../src/common/validation';
import { payloadsBody, payloadsFromJson, payloadsToJson } from '../../src/temporal-codec/payload-json';

const SECRET = 'codec-unit-secret-4c1d';
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const toPayload = (value: unknown) => defaultPayloadConverter.toPayload(value) as Payload;
const input = { organization_uuid: 'org_1', initial_data: { base_url: 'https://h/api', api_token: SECRET } };

const platformKeyId = (master: Buffer) => SecretBox.derive(master, 'temporal-payloads').keyId;
const withoutVerified = (p: Payload): Payload => {
  const { [VERIFIED_ORGANIZATION_METADATA]: _verified, ...metadata } = p.metadata ?? {};
  return { ...p, metadata };
};

/** Without a serialization context the master-key codec writes platform payloads: the format before organizations were bound. */
describe('EncryptionCodec (platform payloads)', () => {
  const master = randomBytes(32);
  const codec = EncryptionCodec.fromMasterKey(master);
  const keyId = platformKeyId(master);

  it('round-trips payloads whole: metadata, data and the original encoding come back identical', async () => {
    const originals = [toPayload(input), toPayload(null), toPayload(new Uint8Array([0, 1, 2, 255])), toPayload('')];
    const encoded = await codec.encode(originals);
    expect(encoded).toHaveLength(originals.length);
    const decoded = (await codec.decode(encoded)).map(withoutVerified);
    expect(decoded.map((p) => temporal.api.common.v1.Payload.toObject(temporal.api.common.v1.Payload.create(p)))).toEqual(
      originals.map((p) => temporal.api.common.v1.Payload.toObject(temporal.api.common.v1.Payload.create(p))),
    );
    expect(defaultPayloadConverter.fromPayload(decoded[0])).toEqual(input);
  });

  it('emits binary/encrypted with the key id and nothing of the original in clear', async () => {
    const [encoded] = await codec.encode([toPayload(input)]);
    expect(Object.keys(encoded.metadata!).sort()).toEqual(['encoding', KEY_ID_METADATA]);
    expect(text(encoded.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded.metadata![KEY_ID_METADATA])).toBe(keyId);
    const raw = Buffer.from(encoded.data!);
    for (const needle of [SECRET, 'json/plain', 'api_token', 'org_1']) {
      expect(raw.includes(needle)).toBe(false);
      expect(raw.toString('base64')).not.toContain(Buffer.from(needle).toString('base64'));
    }
    // A fresh IV each time: the same payload never encrypts to the same bytes.
    const [again] = await codec.encode([toPayload(input)]);
    expect(Buffer.from(again.data!).equals(raw)).toBe(false);
  });

  it('uses the temporal-payloads key, never the connections key', async () => {
    const [encoded] = await codec.encode([toPayload(input)]);
    expect(text(encoded.metadata![KEY_ID_METADATA])).not.toBe(SecretBox.derive(master, 'connections').keyId);
    expect(() => SecretBox.derive(master, 'connections').open(Buffer.from(encoded.data!))).toThrow();
  });

  it('passes payloads it did not encrypt through unchanged (runs started by a client without the codec)', async () => {
    const foreign = [toPayload(input), toPayload(undefined), { metadata: { encoding: Buffer.from('binary/other') }, data: Buffer.from('x') }];
    const decoded = await codec.decode(foreign);
    expect(decoded).toHaveLength(3);
    decoded.forEach((p, i) => expect(p).toBe(foreign[i]));
  });

  it('detects tampering: any flipped byte of the sealed data fails authentication', async () => {
    const [encoded] = await codec.encode([toPayload(input)]);
    const data = Buffer.from(encoded.data!);
    // IV, tag and ciphertext positions alike.
    for (const position of [0, 11, 12, 27, 28, data.length - 1]) {
      const flipped = Buffer.from(data);
      flipped[position] ^= 0x01;
      const tampered = { metadata: encoded.metadata, data: flipped };
      await expect(codec.decode([tampered])).rejects.toThrow(PayloadDecryptionError);
      await expect(codec.decode([tampered])).rejects.toMatchObject({ reason: 'authentication_failed' });
    }
    await expect(codec.decode([{ metadata: encoded.metadata, data: data.subarray(0, 20) }])).rejects.toMatchObject({
      reason: 'authentication_failed',
    });
    // The untouched payload still decodes: the failures above are the flips, not the test.
    expect(defaultPayloadConverter.fromPayload((await codec.decode([encoded]))[0])).toEqual(input);
  });

  it('refuses a payload encrypted under another key, naming the key id', async () => {
    const other = EncryptionCodec.fromMasterKey(randomBytes(32));
    const [encoded] = await other.encode([toPayload(input)]);
    const err = await codec.decode([encoded]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadDecryptionError);
    expect(err).toMatchObject({ reason: 'unknown_key_id' });
    expect((err as Error).message).toContain(text(encoded.metadata![KEY_ID_METADATA]));
    expect((err as Error).message).toContain('ENGINE_SECRET_KEY');
    expect((err as Error).message).not.toContain(SECRET);
  });

  it('a key id swapped to the right key still fails authentication (metadata is not trusted)', async () => {
    const other = EncryptionCodec.fromMasterKey(randomBytes(32));
    const [encoded] = await other.encode([toPayload(input)]);
    const relabelled = { metadata: { ...encoded.metadata, [KEY_ID_METADATA]: Buffer.from(keyId) }, data: encoded.data };
    await expect(codec.decode([relabelled])).rejects.toMatchObject({ reason: 'authentication_failed' });
  });

  it('refuses an encrypted payload without a key id', async () => {
    const [encoded] = await codec.encode([toPayload(input)]);
    await expect(codec.decode([{ metadata: { encoding: encoded.metadata!.encoding }, data: encoded.data }])).rejects.toMatchObject({
      reason: 'missing_key_id',
    });
  });

  it('decrypts with a previous key during rotation and encrypts with the current one', async () => {
    const oldMaster = randomBytes(32);
    const [old] = await EncryptionCodec.fromMasterKey(oldMaster).encode([toPayload(input)]);
    const rotated = EncryptionCodec.fromMasterKey(master, [oldMaster]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0])).toEqual(input);
    const [fresh] = await rotated.encode([toPayload(input)]);
    expect(text(fresh.metadata![KEY_ID_METADATA])).toBe(keyId);
  });

  it('createDataConverter gives one codec on the master key and the payload converter that carries the verified organization', async () => {
    const converter = createDataConverter(master);
    expect(converter.payloadCodecs).toHaveLength(1);
    expect(converter.payloadConverterPath).toBe(require.resolve('../../workflows/payload-converter'));
    const [encoded] = await converter.payloadCodecs![0].encode([toPayload(input)]);
    expect(defaultPayloadConverter.fromPayload((await codec.decode([encoded]))[0])).toEqual(input);
  });
});

describe('codec endpoint JSON (protobuf JSON: bytes as base64)', () => {
  it('reads and writes the Payloads shape the Temporal UI sends', async () => {
    const codec = EncryptionCodec.fromMasterKey(randomBytes(32));
    const [encoded] = await codec.encode([toPayload(input)]);
    const json = payloadsToJson([encoded]);
    expect(json.payloads[0].metadata.encoding).toBe(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
    expect(JSON.stringify(json)).not.toContain(SECRET);
    const [back] = payloadsFromJson(JSON.parse(JSON.stringify(json)));
    const [decoded] = (await codec.decode([back])).map(withoutVerified);
    expect(payloadsToJson([decoded]).payloads[0]).toEqual({
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify(input)).toString('base64'),
    });
  });

  it('accepts missing metadata or data (proto3 JSON omits empty fields)', () => {
    expect(payloadsFromJson({ payloads: [{}] })).toEqual([{ metadata: {}, data: Buffer.alloc(0) }]);
  });

  it.each([
    [undefined, '(body)'],
    [{}, 'payloads'],
    [{ payloads: 'x' }, 'payloads'],
    [{ payloads: [{ data: 'not base64!' }] }, 'payloads.0.data'],
    [{ payloads: [{ metadata: { encoding: 5 } }] }, 'payloads.0.metadata.encoding'],
    [{ payloads: [], extra: 1 }, 'extra'],
  ])('rejects %j naming %s', async (body, field) => {
    const err = await new SchemaValidationPipe().transform(body, { type: 'body', schema: payloadsBody }).catch((e: unknown) => e);
    expect(err).toEqual(expect.objectContaining({ status: 422, code: 'validation_failed' }));
    expect((err as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
  });
});
