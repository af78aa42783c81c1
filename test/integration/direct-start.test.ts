import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, type Payload, type PayloadCodec } from '@temporalio/common';
import { esignDeleteUserAuthorization, esignGetResourceInformation, TASK_QUEUE, type EngineWorkflowInput } from '../../workflows';
import { MEMO_WORKFLOW_TYPE, SA_ORGANIZATION, SA_STATE, SA_WORKFLOW_TYPE } from '../../workflows/constants';
import { api, esignCalls, esignDeleteInput, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';

jest.setTimeout(45_000);

const RESOURCES = 'esign.resources.get-resource-information';

const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');

/**
 * The engine encrypts Temporal payloads (ENGINE_SECRET_KEY, which this test process
 * does not hold). A service starting runs directly uses the engine's data converter;
 * here the same codec is reached through the API's remote codec endpoint
 * (/api/temporal-codec/{encode,decode}, the one the Temporal UI uses).
 */
class ApiCodec implements PayloadCodec {
  /** Encodes for the token's organization, as that organization's codec key would. */
  constructor(private readonly token = stackEnv.tokenA) {}
  encode(payloads: Payload[]) {
    return this.call('encode', payloads);
  }
  decode(payloads: Payload[]) {
    return this.call('decode', payloads);
  }
  private async call(direction: 'encode' | 'decode', payloads: Payload[]): Promise<Payload[]> {
    if (!payloads.length) return payloads;
    const body = {
      payloads: payloads.map((p) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
        data: b64(p.data),
      })),
    };
    const res = await api(`/api/temporal-codec/${direction}`, { body, token: this.token });
    if (res.status !== 200) throw new Error(`codec ${direction} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.payloads.map((p: { metadata?: Record<string, string>; data?: string }) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(p.data ?? '', 'base64'),
    }));
  }
}

/** A run's fields minus what differs between any two runs (ids, times). */
const comparable = (run: any) => {
  const { workflow_id, created_at, updated_at, ...rest } = run;
  return rest;
};
const historyOf = async (id: string, token = stackEnv.tokenA) => (await api(`/api/workflows/${id}/history`, { token })).body;
const listIds = async (token: string, query: string) => {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await api(`/api/workflows?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    expect(res.status).toBe(200);
    ids.push(...res.body.runs.map((r: any) => r.workflow_id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
};

describe('a run started with the Temporal client directly', () => {
  let connection: Connection;
  let client: Client;
  /** Org B's service, with its own key. */
  let clientB: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
    // Without payload encryption in the service (no codec endpoint), payloads are plain JSON.
    const codecAvailable = (await api('/api/temporal-codec/encode', { body: { payloads: [] } })).status === 200;
    client = new Client({ connection, dataConverter: { payloadCodecs: codecAvailable ? [new ApiCodec()] : [] } });
    clientB = new Client({ connection, dataConverter: { payloadCodecs: codecAvailable ? [new ApiCodec(stackEnv.tokenB)] : [] } });
  });
  afterAll(async () => {
    await connection?.close();
  });

  const directStart = (workflowId: string, initial_data: Record<string, unknown>, organization_uuid = stackEnv.orgA) => {
    const input: EngineWorkflowInput = { organization_uuid, initial_data };
    return client.workflow.start(esignGetResourceInformation, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
  };

  it('is projected and readable through the API exactly like one started through POST /start', async () => {
    const directId = `wf_direct_${uniqueId('ok').replace(/-/g, '_')}`;
    const handle = await directStart(directId, { base_url: stackEnv.esignUrl });
    const apiId = await startRun(RESOURCES, { base_url: stackEnv.esignUrl });
    const output = await handle.result();
    expect(output).toEqual({ base_url: stackEnv.esignUrl, status_code: 200, response: expect.any(Object) });

    const [direct, viaApi] = [await waitForTerminal(directId), await waitForTerminal(apiId)];
    expect(Object.keys(direct).sort()).toEqual(Object.keys(viaApi).sort());
    expect(comparable(direct)).toEqual(comparable(viaApi));
    expect(direct).toMatchObject({
      workflow_id: directId,
      workflow_type: RESOURCES,
      organization_uuid: stackEnv.orgA,
      state_name: 'COMPLETED',
      status: 'COMPLETED',
      is_terminal: true,
      attempt: 1,
      state_data: output,
    });

    const [dh, ah] = [await historyOf(directId), await historyOf(apiId)];
    expect(dh.workflow_id).toBe(directId);
    const shape = (t: any) => ({ ...t, at: typeof t.at });
    expect(dh.transitions.map(shape)).toEqual(ah.transitions.map(shape));
    expect(dh.transitions.map(shape)).toEqual([
      { seq: 1, from: 'PENDING', to: 'COMPLETED', action: 'execute', at: 'string', attempt: 1, data: { status_code: 200, response: output.response } },
    ]);

    const stream = await readStream(directId, { timeoutMs: 10_000 });
    expect(stream.status).toBe(200);
    expect(stream.events).toEqual([
      { event: 'transition', id: '1', data: { seq: 1, from: 'PENDING', to: 'COMPLETED', action: 'execute', at: dh.transitions[0].at } },
      { event: 'completed', id: '1', data: { workflow_id: directId, state_name: 'COMPLETED', state_data: output } },
    ]);

    const listed = await listIds(stackEnv.tokenA, `&workflow_type=${RESOURCES}&status=COMPLETED`);
    expect(listed).toContain(directId);
    expect(listed.indexOf(directId)).toBe(listed.lastIndexOf(directId));
  });

  it('carries the search attributes and memo on the Temporal execution', async () => {
    const directId = `wf_direct_${uniqueId('sa').replace(/-/g, '_')}`;
    const handle = await directStart(directId, { base_url: stackEnv.esignUrl });
    await handle.result();
    const d = await handle.describe();
    expect(d.taskQueue).toBe(TASK_QUEUE);
    expect(d.type).toBe(RESOURCES);
    expect(d.status.name).toBe('COMPLETED');
    expect(d.typedSearchAttributes.get(SA_ORGANIZATION)).toBe(stackEnv.orgA);
    expect(d.typedSearchAttributes.get(SA_WORKFLOW_TYPE)).toBe(RESOURCES);
    expect(d.typedSearchAttributes.get(SA_STATE)).toBe('completed');
    expect(d.memo).toEqual({ [MEMO_WORKFLOW_TYPE]: RESOURCES });

    // Exactly what an API-started run carries.
    const apiId = await startRun(RESOURCES, { base_url: stackEnv.esignUrl });
    const apiHandle = client.workflow.getHandle(apiId);
    await apiHandle.result();
    const a = await apiHandle.describe();
    for (const key of [SA_ORGANIZATION, SA_WORKFLOW_TYPE, SA_STATE]) {
      expect(a.typedSearchAttributes.get(key)).toBe(d.typedSearchAttributes.get(key));
    }
    expect(a.memo).toEqual(d.memo);
  });

  it('is invisible to another organization', async () => {
    const directId = `wf_direct_${uniqueId('hidden').replace(/-/g, '_')}`;
    await (await directStart(directId, { base_url: stackEnv.esignUrl })).result();
    await waitForTerminal(directId);
    const notFound = { error: { code: 'not_found', message: `run ${directId} not found`, details: null } };
    for (const suffix of ['', '/history', '/stream']) {
      const res = await api(`/api/workflows/${directId}${suffix}`, { token: stackEnv.tokenB });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    }
    expect(await listIds(stackEnv.tokenB, '')).not.toContain(directId);
  });

  describe("reusing a closed run's workflow id", () => {
    /** A completed run of org A, started directly, with what the API shows of it. */
    const completedRun = async (prefix: string) => {
      const id = `wf_direct_${uniqueId(prefix).replace(/-/g, '_')}`;
      await (await directStart(id, { base_url: stackEnv.esignUrl })).result();
      await waitForTerminal(id);
      return { id, run: (await api(`/api/workflows/${id}`)).body, history: await historyOf(id) };
    };

    /** Starts an e-signature delete under `id` (Temporal allows it: the run there is closed) and expects it refused at once. */
    const expectRefused = async (starter: Client, id: string, organization_uuid: string) => {
      const input = esignDeleteInput('ok');
      const args: [EngineWorkflowInput] = [{ organization_uuid, initial_data: input }];
      const handle = await starter.workflow.start(esignDeleteUserAuthorization, { taskQueue: TASK_QUEUE, workflowId: id, args });
      try {
        const err = await Promise.race([
          handle.result().then(() => 'completed', (e: unknown) => e),
          new Promise((r) => setTimeout(() => r('still running after 15 s'), 15_000)),
        ]);
        expect(err).toBeInstanceOf(WorkflowFailedError);
        const cause = (err as WorkflowFailedError).cause;
        expect(cause).toBeInstanceOf(ApplicationFailure);
        expect(cause).toMatchObject({
          type: 'workflow_id_in_use',
          nonRetryable: true,
          message: `workflow id ${id} is in use: a workflow id names one run of this service; use a new id, or POST /api/workflows/${id}/retry`,
        });
      } finally {
        if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test cleanup');
      }
      // Refused before its step ran.
      expect(await esignCalls(input.authorizationid)).toEqual([]);
    };

    it("by another organization: the new execution fails as workflow_id_in_use, the first organization's run is untouched", async () => {
      const { id, run, history } = await completedRun('reuse_org');
      await expectRefused(clientB, id, stackEnv.orgB);
      expect((await api(`/api/workflows/${id}`)).body).toEqual(run);
      expect(await historyOf(id)).toEqual(history);
      expect((await api(`/api/workflows/${id}`, { token: stackEnv.tokenB })).status).toBe(404);
      expect(await listIds(stackEnv.tokenB, '')).not.toContain(id);
    });

    it('in the same organization: the new execution fails as workflow_id_in_use instead of being dropped or merged', async () => {
      const { id, run, history } = await completedRun('reuse_same');
      await expectRefused(client, id, stackEnv.orgA);
      expect((await api(`/api/workflows/${id}`)).body).toEqual(run);
      expect(await historyOf(id)).toEqual(history);
    });
  });

  /** Starts a run with invalid input and checks it fails as invalid_input, through Temporal and the API. */
  async function expectInvalidInputFailure(initialData: Record<string, unknown>, reasonMentions: string[]) {
    const directId = `wf_direct_${uniqueId('bad').replace(/-/g, '_')}`;
    const handle = await directStart(directId, initialData);
    try {
      const err = await Promise.race([
        handle.result().then(
          () => 'completed',
          (e: unknown) => e,
        ),
        new Promise((r) => setTimeout(() => r('still running after 15 s'), 15_000)),
      ]);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('invalid_input');
      expect((cause as ApplicationFailure).nonRetryable).toBe(true);

      const run = await waitForTerminal(directId, stackEnv.tokenA, 5_000);
      expect(run).toMatchObject({
        workflow_id: directId,
        workflow_type: RESOURCES,
        organization_uuid: stackEnv.orgA,
        status: 'FAILED',
        state_name: 'FAILED',
        is_terminal: true,
        attempt: 1,
      });
      expect(run.state_data).toMatchObject({
        failure_type: 'invalid_input',
        failed_step: 'validate',
        failed_layer: 'validation',
        failure_reason: expect.any(String),
      });
      for (const field of reasonMentions) expect(run.state_data.failure_reason).toContain(field);
      const history = await historyOf(directId);
      expect(history.transitions.map((t: any) => [t.seq, t.from, t.to, t.action])).toEqual([[1, 'PENDING', 'FAILED', 'fail']]);
      const stream = await readStream(directId, { timeoutMs: 10_000 });
      expect(stream.events.map((e) => e.event)).toEqual(['transition', 'failed']);
      expect(stream.events[1].data.error).toMatchObject({ message: run.state_data.failure_reason, failure_type: 'invalid_input' });
      expect((await handle.describe()).typedSearchAttributes.get(SA_STATE)).toBe('failed');
    } finally {
      // A run wedged by a bug would otherwise retry its workflow task until the server stops.
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test cleanup');
    }
    return directId;
  }

  it('with invalid initial_data ends FAILED with failure_type invalid_input, visible through the API', async () => {
    await expectInvalidInputFailure({ surprise: 1 }, ['initial_data.base_url', 'surprise']);
  });

  it('with a base_url that is not a URL at all ends FAILED with invalid_input (not a stuck run)', async () => {
    await expectInvalidInputFailure({ base_url: 'not a url' }, ['initial_data.base_url']);
  });

  it('with a NUL character in initial_data ends FAILED with invalid_input naming the field, and is projected', async () => {
    // Postgres refuses NUL: the run must neither stall its projection nor carry the NUL into it.
    const id = await expectInvalidInputFailure({ base_url: stackEnv.esignUrl, 'odd\u0000key': 'x\u0000y' }, ['initial_data.odd\\u0000key', 'NUL']);
    const run = (await api(`/api/workflows/${id}`)).body;
    expect(run.state_data.base_url).toBe(stackEnv.esignUrl);
    expect(Object.keys(run.state_data).filter((k) => k.startsWith('odd'))).toEqual([]);
  });

  it('with invalid initial_data shows none of its unknown fields nor a value of the wrong type, in no view of the run', async () => {
    const secrets = { api_token: 12345678, password: 'pw_SECRET_43' };
    const id = await expectInvalidInputFailure({ base_url: stackEnv.esignUrl, ...secrets }, ['initial_data.api_token', 'initial_data.password']);
    const run = (await api(`/api/workflows/${id}`)).body;
    expect(run.state_data.base_url).toBe(stackEnv.esignUrl);
    expect(run.state_data).not.toHaveProperty('api_token');
    expect(run.state_data).not.toHaveProperty('password');
    const { output_schema } = (await api(`/api/workflows/types/${RESOURCES}/schema`)).body;
    expect(output_schema.additionalProperties).toBe(false);
    for (const field of Object.keys(run.state_data)) expect(Object.keys(output_schema.properties)).toContain(field);
    const shown = JSON.stringify([run, await historyOf(id), (await readStream(id, { timeoutMs: 10_000 })).events]);
    for (const value of Object.values(secrets)) expect(shown).not.toContain(String(value));
  });

  it('with invalid initial_data shows a secret field it was given as "[redacted]"', async () => {
    const id = await expectInvalidInputFailure({ base_url: stackEnv.esignUrl, api_token: 'tok_SECRET_44', extra: 1 }, ['initial_data.extra']);
    const run = (await api(`/api/workflows/${id}`)).body;
    expect(run.state_data).toMatchObject({ base_url: stackEnv.esignUrl, api_token: '[redacted]' });
    expect(run.state_data).not.toHaveProperty('extra');
  });
});
