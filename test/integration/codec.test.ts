import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { createDataConverter, ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA, openPayload, ORGANIZATION_METADATA, sealPayload } from '../../activities/payload-codec';
import { MasterPayloadKeys } from '../../activities/payload-keys';
import { esignGetResourceInformation, TASK_QUEUE, type EngineWorkflowInput } from '../../workflows';
import { engineWorkflowCode } from '../../src/worker/worker';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { engineWiring } from '../support/engine-wiring';
import { temporalBinary } from '../support/temporal-server';

/**
 * Secrets never in clear in Temporal: the API's client and the worker encrypt
 * every payload with the codec (AES-256-GCM, the organization's key derived from
 * ENGINE_SECRET_KEY). These
 * tests read the RAW history from the Temporal server, as anyone with access to
 * Temporal (UI, CLI, database) would, and find no secret; a client holding the
 * key, the codec endpoint and the temporal CLI pointed at it do find them.
 */
jest.setTimeout(60_000);

type History = temporal.api.history.v1.IHistory;
const RESOURCES = 'esign.resources.get-resource-information';
const DELETE = 'esign.authorizations.delete-user-authorization';
const UI_ORIGIN = 'http://127.0.0.1:8233';
const CODEC = '/api/temporal-codec';

const secretKey = () => Buffer.from(process.env.TEST_ENGINE_SECRET_KEY!, 'hex');
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const encodingOf = (p: Payload) => text(p.metadata?.encoding);

interface Found {
  path: string;
  payload: Payload;
}

/** Every Payload anywhere in a history (inputs, results, failure details, memo, markers, headers, search attributes…). */
function payloadsIn(value: unknown, path = '', out: Found[] = []): Found[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const v = value as Record<string, unknown>;
  if (v.metadata && typeof v.metadata === 'object' && 'encoding' in (v.metadata as object)) {
    out.push({ path, payload: v as Payload });
    return out;
  }
  for (const [key, child] of Object.entries(v)) payloadsIn(child, path ? `${path}.${key}` : key, out);
  return out;
}

/**
 * Where payloads stay in clear by design: search attributes (the server indexes
 * them), headers (interceptors; the SDK's codec runner skips them) and the Core
 * SDK's own marker bookkeeping: local activities' (`details.data`: seq, attempt,
 * activity id and type, times; the local activity's result is `details.result`)
 * and patches' (`details.patch-data`: the patch id).
 */
const clearByDesign = (path: string) => /\.(searchAttributes|header)\.|markerRecordedEventAttributes\.details\.(data|patch-data)\./.test(path);
const MARKER_BOOKKEEPING = ['seq', 'attempt', 'activity_id', 'activity_type', 'complete_time', 'backoff', 'original_schedule_time'];

/** Where `secret` shows in a history: its JSON, its protobuf bytes, any payload's data (base64-decoded) or metadata. */
function secretIn(history: History, secret: string): string[] {
  const places: string[] = [];
  if (historyToJSON(history as temporal.api.history.v1.History).includes(secret)) places.push('history JSON');
  if (Buffer.from(temporal.api.history.v1.History.encode(history).finish()).includes(secret)) places.push('history bytes');
  for (const { path, payload } of payloadsIn(history)) {
    if (text(payload.data).includes(secret)) places.push(`${path}.data`);
    for (const [key, value] of Object.entries(payload.metadata ?? {})) if (text(value).includes(secret)) places.push(`${path}.metadata.${key}`);
  }
  return places;
}

/** A copy of a history with every payload decoded, as a holder of the key sees it. */
async function decodedCopy(history: History, codec: EncryptionCodec): Promise<History> {
  const copy = temporal.api.history.v1.History.decode(temporal.api.history.v1.History.encode(history).finish());
  for (const { payload } of payloadsIn(copy)) {
    const [decoded] = await codec.decode([payload]);
    payload.metadata = decoded.metadata;
    payload.data = decoded.data;
  }
  return copy;
}

describe('the Temporal payload codec', () => {
  let connection: Connection;
  /** What anyone with access to Temporal sees: no codec. */
  let rawClient: Client;
  /** What the service's processes use. */
  let codecClient: Client;
  const codec = EncryptionCodec.fromMasterKey(secretKey());
  const keys = new MasterPayloadKeys(secretKey());
  const orgAKeyId = () => keys.organizationBoxes(stackEnv.orgA)[0].keyId;

  beforeAll(async () => {
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
    rawClient = new Client({ connection });
    codecClient = new Client({ connection, dataConverter: createDataConverter(secretKey()) });
  });
  afterAll(async () => {
    await connection?.close();
  });

  const rawHistory = async (workflowId: string) => (await rawClient.workflow.getHandle(workflowId).fetchHistory()) as History;
  const startedInput = (history: History): Payload =>
    history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0] as Payload;

  describe('runs started through the API', () => {
    const tokenSecret = `codec-secret-${uniqueId('tok')}`;
    let failedId: string;
    let deleteId: string;
    let authorizationId: string;

    beforeAll(async () => {
      authorizationId = uniqueId('ok');
      // A token the double refuses: the run fails, so its failure details (the retry checkpoint, inputs included) are in history too.
      failedId = await startRun(RESOURCES, { base_url: stackEnv.esignUrl, api_token: tokenSecret });
      deleteId = await startRun(DELETE, {
        base_url: stackEnv.esignUrl,
        api_token: ESIGN_VALID_TOKEN,
        accountid: String(Date.now() % 1_000_000_000),
        userid: uniqueId('user'),
        authorizationid: authorizationId,
      });
      const [failed, deleted] = [await waitForTerminal(failedId), await waitForTerminal(deleteId)];
      expect(failed).toMatchObject({ status: 'FAILED', state_data: { failure_type: 'unauthorized', api_token: '[redacted]' } });
      expect(deleted).toMatchObject({ status: 'COMPLETED', state_data: { status_code: 204, authorizationid: authorizationId } });
      // The projection is written before the last workflow task completes: wait for the executions to close.
      await codecClient.workflow.getHandle(failedId).result().catch(() => undefined);
      await codecClient.workflow.getHandle(deleteId).result();
    });

    it('leaves no secret anywhere in the raw Temporal history', async () => {
      const failedHistory = await rawHistory(failedId);
      expect(failedHistory.events!.at(-1)!.workflowExecutionFailedEventAttributes).toBeTruthy();
      expect(secretIn(failedHistory, tokenSecret)).toEqual([]);

      const deleteHistory = await rawHistory(deleteId);
      expect(deleteHistory.events!.at(-1)!.workflowExecutionCompletedEventAttributes).toBeTruthy();
      expect(secretIn(deleteHistory, ESIGN_VALID_TOKEN)).toEqual([]);
      expect(secretIn(deleteHistory, authorizationId)).toEqual([]);

      // The same search on the decoded histories finds them: it would have seen a secret in clear.
      const failedPlaces = secretIn(await decodedCopy(failedHistory, codec), tokenSecret);
      expect(failedPlaces).toContain('events.0.workflowExecutionStartedEventAttributes.input.payloads.0.data');
      expect(failedPlaces).toContainEqual(expect.stringMatching(/workflowExecutionFailedEventAttributes\.failure\.applicationFailureInfo\.details/));
      expect(secretIn(await decodedCopy(deleteHistory, codec), ESIGN_VALID_TOKEN)).toContainEqual(
        expect.stringMatching(/activityTaskScheduledEventAttributes\.input/),
      );
    });

    it('encrypts every payload (inputs, activity inputs and results, local activity markers, memo, results, failure details)', async () => {
      for (const id of [failedId, deleteId]) {
        const found = payloadsIn(await rawHistory(id));
        const encrypted = found.filter((f) => !clearByDesign(f.path));
        expect(encrypted.length).toBeGreaterThan(4);
        for (const { path, payload } of encrypted) {
          expect({ path, encoding: encodingOf(payload) }).toEqual({ path, encoding: ENCRYPTED_ENCODING });
          expect(text(payload.metadata![KEY_ID_METADATA])).toBe(orgAKeyId());
          expect(text(payload.metadata![ORGANIZATION_METADATA])).toBe(stackEnv.orgA);
        }
        const paths = encrypted.map((f) => f.path);
        expect(paths).toEqual(
          expect.arrayContaining([
            'events.0.workflowExecutionStartedEventAttributes.input.payloads.0',
            expect.stringMatching(/^events\.0\.workflowExecutionStartedEventAttributes\.memo\.fields\./),
            expect.stringMatching(/activityTaskScheduledEventAttributes\.input\.payloads\.0$/),
          ]),
        );
        const markers = found.filter((f) => f.path.includes('markerRecordedEventAttributes.details.'));
        expect(markers.map((m) => m.path.replace(/^events\.\d+\./, '').replace(/\.payloads\.\d+$/, ''))).toEqual(
          expect.arrayContaining(['markerRecordedEventAttributes.details.data', 'markerRecordedEventAttributes.details.result']),
        );
        for (const { payload } of markers.filter((m) => m.path.includes('.details.data.'))) {
          for (const key of Object.keys(JSON.parse(text(payload.data)))) expect(MARKER_BOOKKEEPING).toContain(key);
        }
        for (const { payload } of markers.filter((m) => m.path.includes('.details.patch-data.'))) {
          expect(JSON.parse(text(payload.data))).toEqual({ id: expect.stringMatching(/^(engine-[a-z-]+|provider-call-budget)$/), deprecated: false });
        }
        // Search attributes stay readable: the UI and list filters need them.
        const attributes = found.filter((f) => f.path.includes('.searchAttributes.'));
        expect(attributes.length).toBeGreaterThan(0);
        for (const { payload } of attributes) expect(encodingOf(payload)).toBe('json/plain');
      }
      const failedPaths = payloadsIn(await rawHistory(failedId)).map((f) => f.path);
      expect(failedPaths).toContainEqual(expect.stringMatching(/workflowExecutionFailedEventAttributes\.failure\.applicationFailureInfo\.details\.payloads\.0$/));
      const deletePaths = payloadsIn(await rawHistory(deleteId)).map((f) => f.path);
      expect(deletePaths).toContainEqual(expect.stringMatching(/workflowExecutionCompletedEventAttributes\.result\.payloads\.0$/));
      expect(deletePaths).toContainEqual(expect.stringMatching(/activityTaskCompletedEventAttributes\.result\.payloads\.0$/));
    });

    it('a client holding ENGINE_SECRET_KEY decodes the workflow input and finds the secret', async () => {
      const [decoded] = await codec.decode([startedInput(await rawHistory(failedId))]);
      const input = defaultPayloadConverter.fromPayload<EngineWorkflowInput>(decoded);
      expect(input).toEqual({ organization_uuid: stackEnv.orgA, initial_data: { base_url: stackEnv.esignUrl, api_token: tokenSecret } });
      // The failure details carry the retry checkpoint with the token: readable with the key, and only with it.
      const err = await codecClient.workflow.getHandle(failedId).result().catch((e: unknown) => e);
      expect(JSON.stringify((err as { cause?: { details?: unknown } }).cause?.details)).toContain(tokenSecret);
    });

    it('the codec endpoint decodes a payload of that history for an org-member token', async () => {
      const raw = startedInput(await rawHistory(failedId));
      const body = { payloads: [{ metadata: mapToB64(raw.metadata!), data: Buffer.from(raw.data!).toString('base64') }] };
      const res = await api(`${CODEC}/decode`, { body, headers: { 'x-namespace': 'default', origin: UI_ORIGIN } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
      expect(res.body.payloads).toHaveLength(1);
      const [out] = res.body.payloads;
      expect(Buffer.from(out.metadata.encoding, 'base64').toString()).toBe('json/plain');
      expect(JSON.parse(Buffer.from(out.data, 'base64').toString())).toEqual({
        organization_uuid: stackEnv.orgA,
        initial_data: { base_url: stackEnv.esignUrl, api_token: tokenSecret },
      });
      // Payloads that are not encrypted (search attributes, headers, runs of a client without the codec) come back as they are.
      const clearPayload = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"x"').toString('base64') };
      const both = await api(`${CODEC}/decode`, { body: { payloads: [clearPayload, body.payloads[0]] } });
      expect(both.status).toBe(200);
      expect(both.body.payloads[0]).toEqual(clearPayload);
      expect(both.body.payloads[1]).toEqual(out);
    });

    it('an encrypted history replays with the codec (Worker.runReplayHistory), and cannot be replayed without it', async () => {
      const history = await rawHistory(deleteId);
      const asTheWorker = { ...engineWorkflowCode, ...engineWiring() };
      await expect(
        Worker.runReplayHistory({ ...asTheWorker, replayName: 'codec-replay', dataConverter: createDataConverter(secretKey()) }, history, deleteId),
      ).resolves.toBeUndefined();
      await expect(Worker.runReplayHistory({ ...asTheWorker, replayName: 'codec-replay-plain' }, history, deleteId)).rejects.toThrow(
        /Unknown encoding: binary\/encrypted/,
      );
    });

    it('the temporal CLI pointed at the codec endpoint shows the decoded history; without it, no secret', async () => {
      const show = (extra: string[]) =>
        promisify(execFile)(
          temporalBinary(),
          ['workflow', 'show', '--workflow-id', failedId, '--address', stackEnv.temporalAddress, '--output', 'json', ...extra],
          { env: { PATH: process.env.PATH, HOME: process.env.HOME }, maxBuffer: 16 * 1024 * 1024 },
        );
      // The CLI prints payloads as protobuf JSON: data in base64.
      const payloadTexts = (stdout: string) => {
        const texts: string[] = [];
        const walk = (v: unknown) => {
          if (!v || typeof v !== 'object') return;
          const o = v as Record<string, unknown>;
          if (o.metadata && typeof o.data === 'string') texts.push(Buffer.from(o.data, 'base64').toString('utf8'));
          Object.values(o).forEach(walk);
        };
        walk(JSON.parse(stdout));
        return texts;
      };
      const plain = (await show([])).stdout;
      expect(plain).toContain(failedId);
      expect(plain).not.toContain(tokenSecret);
      expect(plain).toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
      expect(payloadTexts(plain).join('\n')).not.toContain(tokenSecret);

      const decoded = (await show(['--codec-endpoint', `${stackEnv.apiUrl}${CODEC}`, '--codec-auth', `Bearer ${stackEnv.tokenA}`])).stdout;
      expect(decoded).not.toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
      expect(payloadTexts(decoded).join('\n')).toContain(tokenSecret);
    });
  });

  describe('the codec endpoint', () => {
    const clearPayload = () => ({
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify({ probe: uniqueId('probe') })).toString('base64'),
    });

    it('answers 401 without a token (with CORS headers, so the UI can read it)', async () => {
      const res = await api(`${CODEC}/decode`, { token: null, body: { payloads: [clearPayload()] }, headers: { origin: UI_ORIGIN } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.body).toEqual({ error: { code: 'unauthorized', message: 'missing bearer token', details: null } });
      expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
      const encode = await api(`${CODEC}/encode`, { token: 'wes_not_a_token', body: { payloads: [clearPayload()] } });
      expect(encode.status).toBe(401);
      expect(encode.body.error.code).toBe('unauthorized');
    });

    it('handles the CORS preflight from the UI origin without a token', async () => {
      for (const path of ['decode', 'encode']) {
        const res = await fetch(`${stackEnv.apiUrl}${CODEC}/${path}`, {
          method: 'OPTIONS',
          headers: {
            origin: UI_ORIGIN,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization,content-type,x-namespace',
          },
        });
        expect(res.status).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
        expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
        const allowed = res.headers.get('access-control-allow-headers')!.split(',').map((h) => h.trim().toLowerCase());
        expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-namespace']));
        expect(res.headers.get('vary')).toMatch(/origin/i);
      }
      const localhost = await fetch(`${stackEnv.apiUrl}${CODEC}/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' },
      });
      expect(localhost.status).toBe(204);
      expect(localhost.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    });

    it('refuses a preflight from an origin not in TEMPORAL_UI_ORIGINS, and grants it nothing', async () => {
      const res = await fetch(`${stackEnv.apiUrl}${CODEC}/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
      const post = await api(`${CODEC}/decode`, { body: { payloads: [clearPayload()] }, headers: { origin: 'https://evil.example' } });
      expect(post.headers.get('access-control-allow-origin')).toBeNull();
      // Only the codec routes answer the UI's origin: the rest of the API grants no origin anything.
      const me = await api('/api/auth/me', { headers: { origin: UI_ORIGIN } });
      expect(me.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('encodes as the service does: the result decodes with the key, and only the endpoint or the key reveal it', async () => {
      const payload = clearPayload();
      const res = await api(`${CODEC}/encode`, { body: { payloads: [payload] } });
      expect(res.status).toBe(200);
      const [encrypted] = res.body.payloads;
      expect(Buffer.from(encrypted.metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(encrypted.metadata[KEY_ID_METADATA], 'base64').toString()).toBe(orgAKeyId());
      expect(Buffer.from(encrypted.metadata[ORGANIZATION_METADATA], 'base64').toString()).toBe(stackEnv.orgA);
      const { payload: back } = openPayload(keys, fromJson(encrypted));
      expect(mapToB64(back.metadata!)).toEqual(payload.metadata);
      expect(Buffer.from(back.data!).toString('base64')).toBe(payload.data);
      const decoded = await api(`${CODEC}/decode`, { body: res.body });
      expect(decoded.body.payloads).toEqual([payload]);
    });

    it('answers 400 for a tampered payload or one under another key, with the standard error body', async () => {
      const sealed = sealPayload(keys, stackEnv.orgA, defaultPayloadConverter.toPayload({ a: 1 })!);
      const tampered = Buffer.from(sealed.data!);
      tampered[tampered.length - 1] ^= 1;
      const res = await api(`${CODEC}/decode`, { body: { payloads: [toJson(sealed), toJson({ ...sealed, data: tampered })] } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'payload_decode_failed', details: { index: 1, reason: 'authentication_failed' } });

      const foreign = sealPayload(new MasterPayloadKeys(Buffer.alloc(32, 7)), stackEnv.orgA, defaultPayloadConverter.toPayload({ a: 1 })!);
      const unknown = await api(`${CODEC}/decode`, { body: { payloads: [toJson(foreign)] } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'payload_decode_failed', details: { index: 0, reason: 'unknown_key_id' } });
      expect(unknown.body.error.message).toContain('key id');
    });

    it('rejects bad input with 4xx and the standard error body', async () => {
      const malformed = await api(`${CODEC}/decode`, { rawBody: '{"payloads": [', headers: { 'content-type': 'application/json' } });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({ error: { code: 'malformed_json', message: expect.any(String), details: null } });

      const wrongShape = await api(`${CODEC}/decode`, { body: { payloads: [{ data: '%%%' }], extra: true } });
      expect(wrongShape.status).toBe(422);
      expect(wrongShape.body.error.code).toBe('validation_failed');
      expect(wrongShape.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['extra', 'payloads.0.data']);

      const empty = await api(`${CODEC}/decode`, { method: 'POST' });
      expect(empty.status).toBe(422);
      expect(empty.body.error.details).toEqual([expect.objectContaining({ field: '(body)', rule: 'required' })]);

      const huge = await api(`${CODEC}/decode`, { body: { payloads: [{ data: Buffer.alloc(1_200_000).toString('base64') }] } });
      expect(huge.status).toBe(413);
      expect(huge.body.error.code).toBe('payload_too_large');

      const get = await api(`${CODEC}/decode`);
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('OPTIONS, POST');
    });
  });

  describe('runs started with the Temporal client directly', () => {
    const start = (client: Client, workflowId: string) => {
      const input: EngineWorkflowInput = { organization_uuid: stackEnv.orgA, initial_data: { base_url: stackEnv.esignUrl } };
      return client.workflow.start(esignGetResourceInformation, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
    };

    it('WITH the codec: the worker decodes the input, the run completes and is projected; history is encrypted', async () => {
      const id = `wf_codec_${uniqueId('with').replace(/-/g, '_')}`;
      const handle = await start(codecClient, id);
      const output = await handle.result();
      expect(output).toEqual({ base_url: stackEnv.esignUrl, status_code: 200, response: expect.any(Object) });
      const run = await waitForTerminal(id);
      expect(run).toMatchObject({ workflow_id: id, organization_uuid: stackEnv.orgA, status: 'COMPLETED', state_data: output });
      const history = await rawHistory(id);
      expect(encodingOf(startedInput(history))).toBe(ENCRYPTED_ENCODING);
      const [input] = await codec.decode([startedInput(history)]);
      expect(defaultPayloadConverter.fromPayload(input)).toEqual({ organization_uuid: stackEnv.orgA, initial_data: { base_url: stackEnv.esignUrl } });
    });

    it('WITHOUT the codec: the run is refused as organization_mismatch before it does anything (see test/security/tenant-codec)', async () => {
      const id = `wf_codec_${uniqueId('without').replace(/-/g, '_')}`;
      await start(rawClient, id);
      const err = await codecClient.workflow.getHandle(id).result().catch((e: unknown) => e);
      expect((err as { cause?: { type?: string; nonRetryable?: boolean } }).cause).toMatchObject({ type: 'organization_mismatch', nonRetryable: true });
      expect((await api(`/api/workflows/${id}`)).status).toBe(404);
      const history = await rawHistory(id);
      expect(encodingOf(startedInput(history))).toBe('json/plain');
      // Nothing scheduled, no projection (local activity markers): only the patch marker of the check.
      const acted = history.events!.filter(
        (e) => e.activityTaskScheduledEventAttributes || (e.markerRecordedEventAttributes && e.markerRecordedEventAttributes.markerName !== 'core_patch'),
      );
      expect(acted).toEqual([]);
    });
  });
});

function mapToB64(map: Record<string, Uint8Array>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
}

const toJson = (p: Payload) => ({ metadata: mapToB64(p.metadata ?? {}), data: Buffer.from(p.data ?? []).toString('base64') });

function fromJson(p: { metadata: Record<string, string>; data: string }): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data, 'base64'),
  };
}
