import { randomBytes } from 'node:crypto';
import { type Payload, type SerializationContext, defaultPayloadConverter } from '@temporalio/common';
import {
  createOrganizationDataConverter,
  EncryptionCodec,
  KEY_ID_METADATA,
  OrganizationCodec,
  ORGANIZATION_METADATA,
  openPayload,
  PayloadDecryptionError,
  sealPayload,
} from '../../activities/payload-codec';
import { MasterPayloadKeys, OrganizationPayloadKey } from '../../activities/payload-keys';
import { RunOrganizations } from '../../activities/run-organizations';
import { SecretBox } from '../../activities/secret-box';
import { payloadConverter } from '../../workflows/payload-converter';
import {
  organizationRefusal,
  PLATFORM_OWNER,
  VERIFIED_ORGANIZATION,
  VERIFIED_ORGANIZATION_METADATA,
} from '../../workflows/runtime/organization-binding';
import type { EngineWorkflowInput } from '../../workflows/runtime/contract';

const ORG_A = 'org_aaaaaaaaaaaaaaaaaaaaaaaa';
const ORG_B = 'org_bbbbbbbbbbbbbbbbbbbbbbbb';
const SECRET = 'tenant-unit-secret-77e1';
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const toPayload = (value: unknown) => defaultPayloadConverter.toPayload(value) as Payload;
const inputFor = (organization_uuid: string): EngineWorkflowInput => ({ organization_uuid, initial_data: { api_token: SECRET } });
const workflowContext = (workflowId: string): SerializationContext => ({ type: 'workflow', namespace: 'default', workflowId });
const activityContext = (workflowId: string): SerializationContext => ({ type: 'activity', namespace: 'default', workflowId, isLocal: false });

describe('organization payload keys', () => {
  const master = randomBytes(32);

  it('derives one key per organization, distinct from each other, the platform key and the connections key', () => {
    const a = SecretBox.organizationPayloadKey(master, ORG_A);
    const b = SecretBox.organizationPayloadKey(master, ORG_B);
    expect(a).toHaveLength(32);
    expect(a.equals(SecretBox.organizationPayloadKey(master, ORG_A))).toBe(true);
    expect(a.equals(b)).toBe(false);
    expect(a.equals(SecretBox.organizationPayloadKey(randomBytes(32), ORG_A))).toBe(false);
    const keyIds = new Set([a, b].map((k) => new SecretBox(k).keyId));
    keyIds.add(SecretBox.derive(master, 'temporal-payloads').keyId).add(SecretBox.derive(master, 'connections').keyId);
    expect(keyIds.size).toBe(4);
  });

  it('an organization key refuses any other organization id', () => {
    const key = new OrganizationPayloadKey(ORG_A, SecretBox.organizationPayloadKey(master, ORG_A));
    expect(key.organizationBoxes(ORG_A)).toHaveLength(1);
    expect(key.organizationBoxes(ORG_B)).toEqual([]);
    expect(key.platformBoxes()).toEqual([]);
    expect(() => new OrganizationPayloadKey('acme', randomBytes(32))).toThrow(/not an organization id/);
  });
});

describe('organization-bound payloads', () => {
  const master = randomBytes(32);
  const keys = new MasterPayloadKeys(master);
  const starterA = createOrganizationDataConverter(ORG_A, SecretBox.organizationPayloadKey(master, ORG_A)).payloadCodecs![0];
  const starterB = createOrganizationDataConverter(ORG_B, SecretBox.organizationPayloadKey(master, ORG_B)).payloadCodecs![0];

  it('a direct starter encrypts under its organization, named in clear and authenticated', async () => {
    const [sealed] = await starterA.encode([toPayload(inputFor(ORG_A))]);
    expect(text(sealed.metadata![ORGANIZATION_METADATA])).toBe(ORG_A);
    expect(text(sealed.metadata![KEY_ID_METADATA])).toBe(keys.organizationBoxes(ORG_A)[0].keyId);
    expect(Buffer.from(sealed.data!).includes(SECRET)).toBe(false);
    const opened = openPayload(keys, sealed);
    expect(opened.owner).toBe(ORG_A);
    expect(defaultPayloadConverter.fromPayload(opened.payload)).toEqual(inputFor(ORG_A));
    expect(defaultPayloadConverter.fromPayload((await starterA.decode([sealed]))[0])).toEqual(inputFor(ORG_A));
  });

  it("a direct starter cannot decrypt another organization's payload, nor a platform payload", async () => {
    const [ofA] = await starterA.encode([toPayload(inputFor(ORG_A))]);
    await expect(starterB.decode([ofA])).rejects.toMatchObject({ reason: 'foreign_organization' });
    // Relabelled as its own, it still has no key that opens it.
    const relabelled = { ...ofA, metadata: { ...ofA.metadata, [ORGANIZATION_METADATA]: Buffer.from(ORG_B) } };
    await expect(starterB.decode([relabelled])).rejects.toMatchObject({ reason: 'unknown_key_id' });
    const platform = sealPayload(keys, null, toPayload(inputFor(ORG_A)));
    await expect(starterB.decode([platform])).rejects.toMatchObject({ reason: 'foreign_organization' });
  });

  it("a payload relabelled to another organization, with that organization's key id, fails authentication", async () => {
    const [ofB] = await starterB.encode([toPayload(inputFor(ORG_A))]);
    const forged = {
      ...ofB,
      metadata: {
        ...ofB.metadata,
        [ORGANIZATION_METADATA]: Buffer.from(ORG_A),
        [KEY_ID_METADATA]: Buffer.from(keys.organizationBoxes(ORG_A)[0].keyId),
      },
    };
    expect(() => openPayload(keys, forged)).toThrow(PayloadDecryptionError);
    expect(() => openPayload(keys, forged)).toThrow(/failed authentication/);
    // Dropping the label (posing as a platform payload) fails too.
    const { [ORGANIZATION_METADATA]: _label, ...unlabelled } = ofB.metadata!;
    const platformKeyId = keys.platformBoxes()[0].keyId;
    expect(() => openPayload(keys, { ...ofB, metadata: { ...unlabelled, [KEY_ID_METADATA]: Buffer.from(platformKeyId) } })).toThrow(
      /failed authentication/,
    );
  });

  it('refuses a label that is not an organization id before deriving anything', () => {
    const sealed = sealPayload(keys, ORG_A, toPayload(1));
    const odd = { ...sealed, metadata: { ...sealed.metadata, [ORGANIZATION_METADATA]: Buffer.from('../../etc') } };
    expect(() => openPayload(keys, odd)).toThrow(expect.objectContaining({ reason: 'malformed' }));
  });

  it("the API's codec for an organization decrypts its own and platform payloads, never another organization's", async () => {
    const api = new OrganizationCodec(keys, ORG_A, true);
    const [own] = await api.encode([toPayload(inputFor(ORG_A))]);
    expect(text(own.metadata![ORGANIZATION_METADATA])).toBe(ORG_A);
    expect(defaultPayloadConverter.fromPayload((await api.decode([own]))[0])).toEqual(inputFor(ORG_A));
    const platform = sealPayload(keys, null, toPayload(inputFor(ORG_A)));
    expect(defaultPayloadConverter.fromPayload((await api.decode([platform]))[0])).toEqual(inputFor(ORG_A));
    const [ofB] = await starterB.encode([toPayload(inputFor(ORG_B))]);
    await expect(api.decode([ofB])).rejects.toMatchObject({ reason: 'foreign_organization' });
  });
});

describe("the worker's codec", () => {
  const master = randomBytes(32);
  const keys = new MasterPayloadKeys(master);
  const starterA = new OrganizationCodec(new OrganizationPayloadKey(ORG_A, SecretBox.organizationPayloadKey(master, ORG_A)), ORG_A);
  const starterB = new OrganizationCodec(new OrganizationPayloadKey(ORG_B, SecretBox.organizationPayloadKey(master, ORG_B)), ORG_B);

  it('marks what it decrypted with the organization that encrypted it, and platform payloads as the platform', async () => {
    const codec = new EncryptionCodec(keys);
    const [ofB] = await starterB.encode([toPayload(inputFor(ORG_A))]);
    const [decoded] = await codec.decode([ofB]);
    expect(text(decoded.metadata![VERIFIED_ORGANIZATION_METADATA])).toBe(ORG_B);
    const [platform] = await codec.decode([sealPayload(keys, null, toPayload(1))]);
    expect(text(platform.metadata![VERIFIED_ORGANIZATION_METADATA])).toBe(PLATFORM_OWNER);
  });

  it('drops a verified-organization claim that arrives in clear, and forwards the rest of such a payload', async () => {
    const codec = new EncryptionCodec(keys);
    const forged = toPayload(inputFor(ORG_A));
    forged.metadata![VERIFIED_ORGANIZATION_METADATA] = Buffer.from(ORG_A);
    const [decoded] = await codec.decode([forged]);
    expect(decoded.metadata).not.toHaveProperty(VERIFIED_ORGANIZATION_METADATA);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(inputFor(ORG_A));
  });

  it("encrypts a run's results under the organization of the first payload decoded in its context", async () => {
    const codec = new EncryptionCodec(keys);
    const run = workflowContext('wf_1');
    const [input] = await starterA.encode([toPayload(inputFor(ORG_A))]);
    await codec.decode([input], run);
    // A later payload of another organization (a signal, a query) changes nothing.
    const [signal] = await starterB.encode([toPayload('hello')]);
    await codec.decode([signal], run);
    const [result] = await codec.encode([toPayload({ done: true })], run);
    expect(text(result.metadata![ORGANIZATION_METADATA])).toBe(ORG_A);
    expect(defaultPayloadConverter.fromPayload((await starterA.decode([result]))[0])).toEqual({ done: true });
    // Activities the run schedules get a context of their own: found by workflow id.
    const [activityInput] = await codec.encode([toPayload({ step: 1 })], activityContext('wf_1'));
    expect(text(activityInput.metadata![ORGANIZATION_METADATA])).toBe(ORG_A);
  });

  it('writes platform payloads for a run whose organization it does not know or that came in clear', async () => {
    const codec = new EncryptionCodec(keys);
    const [unknown] = await codec.encode([toPayload(1)], workflowContext('wf_never_seen'));
    expect(unknown.metadata).not.toHaveProperty(ORGANIZATION_METADATA);
    const clearRun = workflowContext('wf_clear');
    await codec.decode([toPayload(inputFor(ORG_A))], clearRun);
    const [result] = await codec.encode([toPayload(1)], clearRun);
    expect(result.metadata).not.toHaveProperty(ORGANIZATION_METADATA);
    await expect(starterA.decode([result])).rejects.toMatchObject({ reason: 'foreign_organization' });
  });

  it('a new run under a reused workflow id gets the organization of its own input', () => {
    const runs = new RunOrganizations();
    const first = workflowContext('wf_reused');
    const second = workflowContext('wf_reused');
    runs.observe(first, ORG_A);
    runs.observe(second, ORG_B);
    expect(runs.ownerFor(first)).toBe(ORG_A);
    expect(runs.ownerFor(second)).toBe(ORG_B);
    expect(runs.ownerFor(activityContext('wf_reused'))).toBe(ORG_B);
    expect(runs.ownerFor(undefined)).toBeNull();
  });

  it("a Dag layer's child (<parent>.<step>) is started under its parent's organization until its own input decides", () => {
    const runs = new RunOrganizations();
    runs.observe(workflowContext('wf_parent'), ORG_A);
    const child = workflowContext('wf_parent.create_thing');
    expect(runs.ownerFor(child)).toBe(ORG_A);
    expect(runs.ownerFor(workflowContext('wf_parent.create_thing.compensation'))).toBe(ORG_A);
    expect(runs.ownerFor(workflowContext('wf_other.create_thing'))).toBeNull();
    runs.observe(child, ORG_B);
    expect(runs.ownerFor(child)).toBe(ORG_B);
    expect(runs.ownerFor(activityContext('wf_parent.create_thing'))).toBe(ORG_B);
  });
});

describe('organizationRefusal (the workflow side)', () => {
  const verified = (input: EngineWorkflowInput, organization: string) =>
    Object.defineProperty(input, VERIFIED_ORGANIZATION, { value: organization, enumerable: false });

  it('accepts an input encrypted for the organization it names, or by the platform', () => {
    expect(organizationRefusal(verified(inputFor(ORG_A), ORG_A))).toBeUndefined();
    expect(organizationRefusal(verified(inputFor(ORG_A), PLATFORM_OWNER))).toBeUndefined();
  });

  it('refuses an input encrypted for another organization, naming both and nothing of the input', () => {
    const reason = organizationRefusal(verified(inputFor(ORG_A), ORG_B));
    expect(reason).toContain(ORG_A);
    expect(reason).toContain(ORG_B);
    expect(reason).not.toContain(SECRET);
  });

  it('refuses an input that was not encrypted at all', () => {
    expect(organizationRefusal(inputFor(ORG_A))).toMatch(/not encrypted for it/);
    expect(organizationRefusal(undefined as unknown as EngineWorkflowInput)).toMatch(/\(none\)/);
  });
});

describe('the payload converter of the workflow sandbox', () => {
  it('carries the verified organization on the decoded value, invisibly to JSON and spreads', () => {
    const payload = toPayload(inputFor(ORG_A));
    payload.metadata![VERIFIED_ORGANIZATION_METADATA] = Buffer.from(ORG_B);
    const value = payloadConverter.fromPayload<EngineWorkflowInput>(payload);
    expect((value as unknown as Record<symbol, unknown>)[VERIFIED_ORGANIZATION]).toBe(ORG_B);
    expect(JSON.parse(JSON.stringify(value))).toEqual(inputFor(ORG_A));
    expect(Object.getOwnPropertySymbols({ ...value })).toEqual([]);
    expect(organizationRefusal(value)).toContain(ORG_B);
  });

  it('leaves values of unverified payloads (and non-objects) as the default converter does', () => {
    const value = payloadConverter.fromPayload<EngineWorkflowInput>(toPayload(inputFor(ORG_A)));
    expect(Object.getOwnPropertySymbols(value)).toEqual([]);
    const labelled = toPayload('text');
    labelled.metadata![VERIFIED_ORGANIZATION_METADATA] = Buffer.from(ORG_A);
    expect(payloadConverter.fromPayload(labelled)).toBe('text');
    expect(payloadConverter.toPayload({ a: 1 })).toEqual(defaultPayloadConverter.toPayload({ a: 1 }));
  });
});
