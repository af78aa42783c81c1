import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, type DataConverter, defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  createDataConverter,
  createOrganizationDataConverter,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  ORGANIZATION_METADATA,
  PayloadDecryptionError,
  sealPayload,
} from '../../activities/payload-codec';
import { MasterPayloadKeys } from '../../activities/payload-keys';
import { projectRoot } from '../../db/client';
import { TASK_QUEUE, type EngineWorkflowInput } from '../../workflows';
import { VERIFIED_ORGANIZATION_METADATA } from '../../workflows/runtime/organization-binding';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, payloadsIn, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { waitFor } from '../support/ports';

/**
 * Payload encryption binds the organization (README, Security, "Payload encryption and
 * trust boundaries"). Each attack comes from someone who reaches the Temporal frontend
 * or holds an org-member token, and must be refused with nothing sent to a provider,
 * nothing projected and no plaintext or secret returned or logged.
 */
jest.setTimeout(60_000);

type History = temporal.api.history.v1.IHistory;
const DELETE = 'esign.authorizations.delete-user-authorization';
const CODEC = '/api/temporal-codec';

const secretKey = () => Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex');
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
  data: b64(p.data),
});
const fromJson = (p: { metadata?: Record<string, string>; data?: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const runId = (label: string) => `wf_tenant_${uniqueId(label).replace(/-/g, '_')}`;

/** `npm run cli -- codec-key --org <id> --json`, with the stack's master key, as an operator runs it. */
function codecKey(organization: string): Buffer {
  const out = execFileSync(process.execPath, [path.join(projectRoot(), 'dist', 'src', 'cli.js'), 'codec-key', '--org', organization, '--json'], {
    env: { PATH: process.env.PATH, ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY },
    encoding: 'utf8',
  });
  const parsed = JSON.parse(out) as { organization_uuid: string; key: string };
  expect(parsed.organization_uuid).toBe(organization);
  return Buffer.from(parsed.key, 'hex');
}

/** A codec that replaces every payload it encodes by what `forge` makes of it. */
const forging = (forge: (p: Payload) => Promise<Payload> | Payload): DataConverter => ({
  payloadCodecs: [
    {
      encode: async (payloads: Payload[]) => Promise.all(payloads.map(forge)),
      decode: async (payloads: Payload[]) => payloads,
    } satisfies PayloadCodec,
  ],
});

/** The e-signature delete: the provider call it would make is unmistakable in the double's log. */
function deleteInput(organization_uuid: string, secret: string) {
  const authorizationid = uniqueId('ok');
  const input: EngineWorkflowInput = {
    organization_uuid,
    initial_data: { base_url: stackEnv.esignUrl, api_token: secret, accountid: '42', userid: uniqueId('user'), authorizationid },
  };
  return { input, authorizationid };
}

async function esignPathsCalled(): Promise<string[]> {
  const calls = (await (await fetch(new URL('/__calls', stackEnv.esignUrl))).json()) as Array<{ path: string }>;
  return calls.map((c) => c.path);
}

describe('payload encryption binds the organization', () => {
  let connection: Connection;
  /** Anyone who reaches the Temporal frontend, holding no key. */
  let raw: Client;
  /** The service's own view (the master key): used only to read outcomes. */
  let service: Client;
  const keys = new MasterPayloadKeys(secretKey());

  beforeAll(async () => {
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
    raw = new Client({ connection });
    service = new Client({ connection, dataConverter: createDataConverter(secretKey()) });
  });
  afterAll(async () => {
    await connection?.close();
  });

  const rawHistory = async (workflowId: string) => (await raw.workflow.getHandle(workflowId).fetchHistory()) as History;
  const startedInput = (history: History) => history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0] as Payload;
  const start = (client: Client, workflowId: string, input: EngineWorkflowInput) =>
    client.workflow.start(DELETE, { taskQueue: TASK_QUEUE, workflowId, args: [input] });

  /**
   * The run ended FAILED with a non-retryable organization_mismatch before it did anything:
   * no activity, no projection (local activity), no provider call, invisible to both
   * organizations, and the secret of its input in no log line.
   */
  async function expectRefused(workflowId: string, authorizationid: string, secret: string) {
    const err = await service.workflow.getHandle(workflowId).result().then(
      () => 'completed',
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect({ type: cause.type, nonRetryable: cause.nonRetryable }).toEqual({ type: 'organization_mismatch', nonRetryable: true });
    expect(cause.message).toContain(stackEnv.orgA);
    expect(cause.message).not.toContain(secret);

    // Only the check's own patch marker (and the SDK's TemporalChangeVersion for it) may be there.
    const history = await rawHistory(workflowId);
    const upserted = (e: temporal.api.history.v1.IHistoryEvent) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).filter((k) => k !== 'TemporalChangeVersion');
    const acted = history.events!.filter(
      (e) =>
        e.activityTaskScheduledEventAttributes ||
        (e.markerRecordedEventAttributes && e.markerRecordedEventAttributes.markerName !== 'core_patch') ||
        upserted(e).length,
    );
    expect(acted).toEqual([]);
    for (const token of [stackEnv.tokenA, stackEnv.tokenB]) {
      expect((await api(`/api/workflows/${workflowId}`, { token })).status).toBe(404);
    }
    expect((await esignPathsCalled()).filter((p) => p.includes(authorizationid))).toEqual([]);
    expect(fs.readFileSync(stackEnv.logFile, 'utf8')).not.toContain(secret);
    return history;
  }

  it('a client holding no key starts a run as organization A: refused, nothing sent, stored or logged', async () => {
    const secret = `tenant-secret-${uniqueId('nokey')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const id = runId('nokey');
    await start(raw, id, input);
    const history = await expectRefused(id, authorizationid, secret);
    expect(text(startedInput(history).metadata!.encoding)).toBe('json/plain');
  });

  it("organization B's own codec key starts a run naming organization A: refused", async () => {
    const secret = `tenant-secret-${uniqueId('bkey')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const clientB = new Client({ connection, dataConverter: createOrganizationDataConverter(stackEnv.orgB, codecKey(stackEnv.orgB)) });
    const id = runId('bkey');
    await start(clientB, id, input);
    const history = await expectRefused(id, authorizationid, secret);
    expect(text(startedInput(history).metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgB);
    // What the worker wrote for that run (its failure) is B's, never A's.
    const failed = history.events!.at(-1)!.workflowExecutionFailedEventAttributes!;
    expect(failed.failure!.message).toContain(stackEnv.orgB);
  });

  it("organization B's token encrypts, through the codec endpoint, an input naming organization A: refused", async () => {
    const secret = `tenant-secret-${uniqueId('bendpoint')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const viaEndpoint = forging(async (p) => {
      const res = await api(`${CODEC}/encode`, { token: stackEnv.tokenB, body: { payloads: [toJson(p)] } });
      expect(res.status).toBe(200);
      return fromJson(res.body.payloads[0]);
    });
    const id = runId('bendpoint');
    await start(new Client({ connection, dataConverter: viaEndpoint }), id, input);
    const history = await expectRefused(id, authorizationid, secret);
    expect(text(startedInput(history).metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgB);
  });

  it("a payload encrypted with B's key and relabelled as A's (organization and key id): it never runs, nothing sent or stored", async () => {
    const secret = `tenant-secret-${uniqueId('relabel')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const [ofB] = await createOrganizationDataConverter(stackEnv.orgB, codecKey(stackEnv.orgB)).payloadCodecs![0].encode([
      defaultPayloadConverter.toPayload(input)!,
    ]);
    const relabel = forging(() => ({
      data: ofB.data,
      metadata: {
        ...ofB.metadata,
        [ORGANIZATION_METADATA]: Buffer.from(stackEnv.orgA),
        [KEY_ID_METADATA]: Buffer.from(keys.organizationBoxes(stackEnv.orgA)[0].keyId),
      },
    }));
    const id = runId('relabel');
    const handle = await start(new Client({ connection, dataConverter: relabel }), id, input);
    try {
      // The worker cannot authenticate the input: its workflow task fails (and is retried), the run does nothing.
      const failedTask = await waitFor(
        'a failed workflow task',
        async () => (await rawHistory(id)).events!.find((e) => e.workflowTaskFailedEventAttributes),
        20_000,
        250,
      );
      expect(failedTask.workflowTaskFailedEventAttributes!.failure!.message).toMatch(/failed authentication/);
      const history = await rawHistory(id);
      expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes)).toEqual([]);
      expect((await api(`/api/workflows/${id}`)).status).toBe(404);
      expect((await esignPathsCalled()).filter((p) => p.includes(authorizationid))).toEqual([]);
    } finally {
      await handle.terminate('test cleanup');
    }
  });

  it('a clear input carrying a forged verified-organization claim: refused as unencrypted', async () => {
    const secret = `tenant-secret-${uniqueId('claim')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const claim = forging((p) => ({ ...p, metadata: { ...p.metadata, [VERIFIED_ORGANIZATION_METADATA]: Buffer.from(stackEnv.orgA) } }));
    const id = runId('claim');
    await start(new Client({ connection, dataConverter: claim }), id, input);
    const history = await expectRefused(id, authorizationid, secret);
    expect(text(startedInput(history).metadata![VERIFIED_ORGANIZATION_METADATA])).toBe(stackEnv.orgA);
  });

  it("a retry-shaped input (resume checkpoint) naming organization A, without A's key: refused", async () => {
    const secret = `tenant-secret-${uniqueId('resume')}`;
    const { input, authorizationid } = deleteInput(stackEnv.orgA, secret);
    const resumed: EngineWorkflowInput = {
      organization_uuid: stackEnv.orgA,
      initial_data: {},
      resume: { reason: 'retry', state: 'pending', data: input.initial_data, seq: 0, attempt: 2 },
    };
    const id = runId('resume');
    await start(raw, id, resumed);
    await expectRefused(id, authorizationid, secret);
  });

  it("organization A's codec key starts a run for A: it runs for A only, and every payload of it is A's", async () => {
    const keyA = codecKey(stackEnv.orgA);
    const clientA = new Client({ connection, dataConverter: createOrganizationDataConverter(stackEnv.orgA, keyA) });
    const { input, authorizationid } = deleteInput(stackEnv.orgA, ESIGN_VALID_TOKEN);
    const id = runId('akey');
    const handle = await start(clientA, id, input);
    expect(await handle.result()).toMatchObject({ status_code: 204, authorizationid });
    expect(await waitForTerminal(id)).toMatchObject({ organization_uuid: stackEnv.orgA, status: 'COMPLETED' });
    expect((await api(`/api/workflows/${id}`, { token: stackEnv.tokenB })).status).toBe(404);
    expect((await esignPathsCalled()).filter((p) => p.includes(authorizationid))).toHaveLength(1);

    const encrypted = payloadsIn(await rawHistory(id)).filter((p) => text(p.metadata?.encoding) === ENCRYPTED_ENCODING);
    expect(encrypted.length).toBeGreaterThan(4);
    for (const p of encrypted) expect(text(p.metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgA);
    // B's key opens none of them.
    const codecB = createOrganizationDataConverter(stackEnv.orgB, codecKey(stackEnv.orgB)).payloadCodecs![0];
    for (const p of encrypted) await expect(codecB.decode([p])).rejects.toBeInstanceOf(PayloadDecryptionError);
  });

  it("organization A's codec key cannot decrypt organization B's payloads, even relabelled", async () => {
    const secret = `tenant-secret-${uniqueId('readb')}`;
    const id = await startRun('esign.resources.get-resource-information', { base_url: stackEnv.esignUrl, api_token: secret }, stackEnv.tokenB);
    await waitForTerminal(id, stackEnv.tokenB);
    const inputOfB = startedInput(await rawHistory(id));
    expect(text(inputOfB.metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgB);
    const codecA = createOrganizationDataConverter(stackEnv.orgA, codecKey(stackEnv.orgA)).payloadCodecs![0];
    await expect(codecA.decode([inputOfB])).rejects.toMatchObject({ reason: 'foreign_organization' });
    const relabelled = { ...inputOfB, metadata: { ...inputOfB.metadata, [ORGANIZATION_METADATA]: Buffer.from(stackEnv.orgA) } };
    await expect(codecA.decode([relabelled])).rejects.toMatchObject({ reason: 'unknown_key_id' });
    const err = await codecA.decode([relabelled]).catch((e: Error) => e.message);
    expect(err).not.toContain(secret);
  });

  describe('the codec endpoint', () => {
    let inputOfA: Payload;
    let secretOfA: string;

    beforeAll(async () => {
      secretOfA = `tenant-secret-${uniqueId('endpoint')}`;
      const id = await startRun('esign.resources.get-resource-information', { base_url: stackEnv.esignUrl, api_token: secretOfA });
      await waitForTerminal(id);
      inputOfA = startedInput(await rawHistory(id));
    });

    it("organization B's token (default settings) gets organization A's payloads back still encrypted, never the plaintext", async () => {
      const ownOfB = sealPayload(keys, stackEnv.orgB, defaultPayloadConverter.toPayload({ mine: true })!);
      const res = await api(`${CODEC}/decode`, { token: stackEnv.tokenB, body: { payloads: [toJson(inputOfA), toJson(ownOfB)] } });
      expect(res.status).toBe(200);
      expect(res.body.payloads[0]).toEqual(toJson(inputOfA));
      expect(JSON.parse(Buffer.from(res.body.payloads[1].data, 'base64').toString())).toEqual({ mine: true });
      const body = JSON.stringify(res.body);
      for (const needle of [secretOfA, stackEnv.esignUrl]) {
        expect(body).not.toContain(needle);
        expect(body).not.toContain(Buffer.from(needle).toString('base64'));
      }
      // The same request with A's token does decode it: the refusal above is B's, not a broken payload.
      const own = await api(`${CODEC}/decode`, { body: { payloads: [toJson(inputOfA)] } });
      expect(Buffer.from(own.body.payloads[0].data, 'base64').toString()).toContain(secretOfA);
      await new Promise((r) => setTimeout(r, 300));
      const audit = fs
        .readFileSync(stackEnv.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('temporal payloads decoded') && l.includes(stackEnv.orgB));
      expect(audit.some((l) => JSON.parse(l).withheld === 1)).toBe(true);
    });

    it('an org-member token gets platform payloads (under the master key, as recorded before organizations were bound) back still encrypted', async () => {
      const platform = sealPayload(keys, null, defaultPayloadConverter.toPayload({ recorded: 'before', token: secretOfA })!);
      expect(platform.metadata).not.toHaveProperty(ORGANIZATION_METADATA);
      for (const token of [stackEnv.tokenA, stackEnv.tokenB]) {
        const res = await api(`${CODEC}/decode`, { token, body: { payloads: [toJson(platform)] } });
        expect(res.status).toBe(200);
        expect(res.body.payloads[0]).toEqual(toJson(platform));
      }
    });

    it("organization A's payload relabelled as B's and sent with B's token: 400 authentication_failed, no plaintext", async () => {
      const relabelled = {
        ...inputOfA,
        metadata: {
          ...inputOfA.metadata,
          [ORGANIZATION_METADATA]: Buffer.from(stackEnv.orgB),
          [KEY_ID_METADATA]: Buffer.from(keys.organizationBoxes(stackEnv.orgB)[0].keyId),
        },
      };
      const res = await api(`${CODEC}/decode`, { token: stackEnv.tokenB, body: { payloads: [toJson(relabelled)] } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'payload_decode_failed', details: { index: 0, reason: 'authentication_failed' } });
      expect(JSON.stringify(res.body)).not.toContain(secretOfA);
    });

    it("organization B's token encodes under B only: A's key and A's token cannot read the result", async () => {
      const res = await api(`${CODEC}/encode`, { token: stackEnv.tokenB, body: { payloads: [toJson(defaultPayloadConverter.toPayload({ b: secretOfA })!)] } });
      expect(res.status).toBe(200);
      const sealed = fromJson(res.body.payloads[0]);
      expect(text(sealed.metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgB);
      const codecA = createOrganizationDataConverter(stackEnv.orgA, codecKey(stackEnv.orgA)).payloadCodecs![0];
      await expect(codecA.decode([sealed])).rejects.toBeInstanceOf(PayloadDecryptionError);
      const asA = await api(`${CODEC}/decode`, { body: res.body });
      expect(asA.body.payloads[0]).toEqual(res.body.payloads[0]);
    });
  });

  describe('cross-organization decoding with an operator organization (TEMPORAL_CODEC_ORGANIZATIONS)', () => {
    const extra = new ExtraApi({ TEMPORAL_ADDRESS: stackEnv.temporalAddress });
    let operator: { organization_uuid: string; token: string };
    let tenant: { organization_uuid: string; token: string };
    let other: { organization_uuid: string; token: string };
    const decode = async (token: string, payloads: Payload[]) => {
      const res = await fetch(`${extra.url}${CODEC}/decode`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: payloads.map(toJson) }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> }).payloads;
    };

    beforeAll(async () => {
      operator = JSON.parse(extra.cli(['org', 'create', uniqueId('platform'), '--json']));
      tenant = JSON.parse(extra.cli(['org', 'create', uniqueId('tenant'), '--json']));
      other = JSON.parse(extra.cli(['org', 'create', uniqueId('other'), '--json']));
      extra.env.TEMPORAL_CODEC_ORGANIZATIONS = operator.organization_uuid;
      await extra.start();
    });
    afterAll(() => extra.stop());

    it('members of the operator organization decode every organization’s payloads and platform payloads; a tenant only its own', async () => {
      const extraKeys = new MasterPayloadKeys(Buffer.from(extra.env.ENGINE_SECRET_KEY!, 'hex'));
      const payload = (owner: string | null) => sealPayload(extraKeys, owner, defaultPayloadConverter.toPayload({ owner })!);
      const all = [payload(tenant.organization_uuid), payload(other.organization_uuid), payload(null)];
      const plain = (p: { data: string }) => JSON.parse(Buffer.from(p.data, 'base64').toString());

      const asOperator = await decode(operator.token, all);
      expect(asOperator.map(plain)).toEqual([{ owner: tenant.organization_uuid }, { owner: other.organization_uuid }, { owner: null }]);

      const asTenant = await decode(tenant.token, all);
      expect(plain(asTenant[0])).toEqual({ owner: tenant.organization_uuid });
      expect(asTenant.slice(1)).toEqual(all.slice(1).map(toJson));
    });
  });

  it('codec-key refuses an id that is not an organization id, and prints no key', () => {
    let failure: { status?: number; stdout?: string; stderr?: string } = {};
    try {
      execFileSync(process.execPath, [path.join(projectRoot(), 'dist', 'src', 'cli.js'), 'codec-key', '--org', '../secret.key'], {
        env: { PATH: process.env.PATH, ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY },
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (err) {
      failure = err as typeof failure;
    }
    expect(failure.status).toBe(1);
    expect(failure.stderr).toMatch(/--org: .* is not an organization id/);
    expect(failure.stdout).toBe('');
  });
});

