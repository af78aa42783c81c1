import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { waitFor } from '../support/ports';
import { api, esignCalls, secretLeaks, stackEnv, startRun, uniqueId, waitForState, waitForTerminal } from '../support/api';

jest.setTimeout(60_000);

const RESOURCES = 'esign.resources.get-resource-information';
const DELETE = 'esign.authorizations.delete-user-authorization';
const ENDPOINTS = 'dbhost.endpoints.list';

/** Reads the e-signature resources, then deletes an authorization at the base_url the first step used. */
const cleanupSteps = (accountid = '4711') => [
  {
    id: 'info',
    workflow_type: RESOURCES,
    inputs: { base_url: { from: 'input', name: 'base_url' }, api_token: { from: 'input', name: 'api_token' } },
  },
  {
    id: 'remove',
    workflow_type: DELETE,
    inputs: {
      base_url: { from: 'step', step: 'info', field: 'base_url' },
      api_token: { from: 'input', name: 'api_token' },
      accountid: { const: accountid },
      userid: { from: 'input', name: 'userid' },
      authorizationid: { from: 'input', name: 'authorizationid' },
    },
  },
];

async function createComposition(body: Record<string, unknown> = {}, token = stackEnv.tokenA) {
  const res = await api('/api/compositions', { token, body: { name: 'cleanup', steps: cleanupSteps(), ...body } });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as { composition_uuid: string; version: number; workflow_type: string; input_schema: any };
}

describe('POST /api/compositions', () => {
  it('creates version 1: 201 with virtual.<uuid>@1 and the JSON Schema of the free inputs only', async () => {
    const created = await createComposition();
    expect(created.composition_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(created.workflow_type).toBe(`virtual.${created.composition_uuid}@1`);
    expect(created.version).toBe(1);
    expect(Object.keys(created.input_schema.properties).sort()).toEqual(['api_token', 'authorizationid', 'base_url', 'userid']);
    // base_url too: step info takes it from an input and has no connection_uuid, one of which its type needs.
    expect(created.input_schema.required.sort()).toEqual(['authorizationid', 'base_url', 'userid']);
    expect(created.input_schema.additionalProperties).toBe(false);
  });

  it.each([
    ['an unknown type', [{ id: 'a', workflow_type: 'no.such.type', inputs: {} }], 'steps.0.workflow_type', 'unknown_type'],
    ['a mapping onto a missing field', [{ ...cleanupSteps()[0], inputs: { ...cleanupSteps()[0].inputs, colour: { const: 'red' } } }], 'steps.0.inputs.colour', 'unknown_field'],
    [
      'a type-incompatible mapping',
      [
        { id: 'eps', workflow_type: ENDPOINTS, inputs: { connection_uuid: { from: 'input', name: 'c' }, dbhost_project_id: { from: 'input', name: 'p' } } },
        cleanupSteps()[0],
        { ...cleanupSteps()[1], inputs: { ...cleanupSteps()[1].inputs, userid: { from: 'step', step: 'eps', field: 'endpoints' } } },
      ],
      'steps.2.inputs.userid',
      'type_mismatch',
    ],
    [
      'a cycle',
      [
        { id: 'a', workflow_type: RESOURCES, inputs: { base_url: { from: 'step', step: 'b', field: 'base_url' } } },
        { id: 'b', workflow_type: RESOURCES, inputs: { base_url: { from: 'step', step: 'a', field: 'base_url' } } },
      ],
      'steps.1.inputs.base_url',
      'cycle',
    ],
    ['a route step with nothing before it', [{ id: 'r', workflow_type: 'route', inputs: {} }], 'steps.0.workflow_type', 'no_route_source'],
    ['a secret stored as a constant', [{ ...cleanupSteps()[0], inputs: { base_url: { from: 'input', name: 'base_url' }, api_token: { const: ESIGN_VALID_TOKEN } } }], 'steps.0.inputs.api_token', 'secret_const'],
    [
      'one free input feeding a secret field and a field that is not',
      [cleanupSteps()[0], { ...cleanupSteps()[1], inputs: { ...cleanupSteps()[1].inputs, userid: { from: 'input', name: 'api_token' } } }],
      'steps.1.inputs.userid',
      'secret_input',
    ],
    [
      "a step's secret output, which is \"[redacted]\"",
      [cleanupSteps()[0], { ...cleanupSteps()[1], inputs: { ...cleanupSteps()[1].inputs, api_token: { from: 'step', step: 'info', field: 'api_token' } } }],
      'steps.1.inputs.api_token',
      'secret_output',
    ],
    [
      'a step id that is also the name of a free input',
      [
        { id: 'u', workflow_type: RESOURCES, inputs: { base_url: { from: 'input', name: 'u' } } },
        { id: 'v', workflow_type: RESOURCES, inputs: { base_url: { from: 'input', name: 'u' } } },
      ],
      'steps.0.id',
      'name_clash',
    ],
    [
      'a constant URL the outbound policy refuses (plain http to a private address)',
      [{ ...cleanupSteps()[0], inputs: { ...cleanupSteps()[0].inputs, base_url: { const: 'http://10.1.2.3/api' } } }, cleanupSteps()[1]],
      'steps.0.inputs.base_url',
      'outbound_policy',
    ],
  ])('refuses %s with 422 naming the step and field, storing nothing', async (_what, steps, field, rule) => {
    const before = (await api('/api/compositions')).body.compositions.length;
    const res = await api('/api/compositions', { body: { name: 'bad', steps } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ field, rule, message: expect.stringMatching(/^step \w+: /) });
    expect(JSON.stringify(res.body)).not.toContain(ESIGN_VALID_TOKEN);
    expect((await api('/api/compositions')).body.compositions.length).toBe(before);
  });

  it("refuses a constant connection with a constant URL outside the connection's destination (422 connection_destination), storing nothing", async () => {
    const created = await api('/api/connections', {
      body: { plugin: 'esign', name: uniqueId('pinned'), secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } },
    });
    expect(created.status).toBe(201);
    const pinned = (base_url: string) => [
      { id: 'info', workflow_type: RESOURCES, inputs: { connection_uuid: { const: created.body.connection_uuid }, base_url: { const: base_url } } },
    ];
    const before = (await api('/api/compositions')).body.compositions.length;
    const res = await api('/api/compositions', { body: { name: 'elsewhere', steps: pinned('https://elsewhere.example.com/api') } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: 'steps.0.inputs.base_url', rule: 'connection_destination', message: expect.stringMatching(/^step info: must have the origin of connection /) },
    ]);
    // Named with every other problem at once.
    const more = await api('/api/compositions', {
      body: { name: 'elsewhere', steps: [...pinned('https://elsewhere.example.com/api'), { id: 'other', workflow_type: 'no.such.type', inputs: {} }] },
    });
    expect(more.body.error.details.map((d: { rule: string }) => d.rule).sort()).toEqual(['connection_destination', 'unknown_type']);
    expect((await api('/api/compositions')).body.compositions.length).toBe(before);
    expect((await api('/api/compositions', { body: { name: 'pinned', steps: pinned(stackEnv.esignUrl) } })).status).toBe(201);
  });

  it('refuses a malformed body with 422 naming the field', async () => {
    const res = await api('/api/compositions', { body: { name: 'x', steps: [{ id: 'a b', workflow_type: RESOURCES }] } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('steps.0.id');
  });

  it('refuses a free input or field named like what every object inherits, as an input name or as an inputs key', async () => {
    const before = (await api('/api/compositions')).body.compositions.length;
    for (const reserved of ['constructor', '__proto__', 'toString']) {
      const asInput = await api('/api/compositions', {
        body: { name: 'x', steps: [{ id: 'a', workflow_type: RESOURCES, inputs: { base_url: { from: 'input', name: reserved } } }] },
      });
      expect(asInput.status).toBe(422);
      expect(asInput.body.error.details).toContainEqual(expect.objectContaining({ field: 'steps.0.inputs.base_url.name' }));
      // Raw JSON: an object literal's "__proto__" would set the prototype, not send the key.
      const asKey = await api('/api/compositions', {
        rawBody: `{"name":"x","steps":[{"id":"a","workflow_type":"${RESOURCES}","inputs":{"${reserved}":{"const":"https://e.example/api"}}}]}`,
      });
      expect(asKey.status).toBe(422);
      expect(asKey.body.error.details).toEqual([expect.objectContaining({ field: `steps.0.inputs.${reserved}` })]);
    }
    expect((await api('/api/compositions')).body.compositions.length).toBe(before);
  });
});

describe('GET and PUT /api/compositions', () => {
  it('lists and reads the organization\'s compositions; PUT adds version 2 and both stay readable and typed', async () => {
    const created = await createComposition({ name: 'to-update', exposed_to_end_users: true });
    const list = await api('/api/compositions');
    expect(list.status).toBe(200);
    expect(list.body.compositions[0]).toMatchObject({
      composition_uuid: created.composition_uuid,
      name: 'to-update',
      version: 1,
      workflow_type: created.workflow_type,
      exposed_to_end_users: true,
    });

    // Named in upper case, as a UUID may be written: the same composition, reported in its stored spelling.
    const put = await api(`/api/compositions/${created.composition_uuid.toUpperCase()}`, {
      method: 'PUT',
      body: { name: 'to-update v2', steps: cleanupSteps().slice(0, 1) },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ composition_uuid: created.composition_uuid, version: 2, workflow_type: `virtual.${created.composition_uuid}@2` });
    expect(Object.keys(put.body.input_schema.properties).sort()).toEqual(['api_token', 'base_url']);

    const detail = await api(`/api/compositions/${created.composition_uuid.toUpperCase()}`);
    expect(detail.status).toBe(200);
    expect(detail.body.versions[0].workflow_type).toBe(`virtual.${created.composition_uuid}@2`);
    expect(detail.body).toMatchObject({ name: 'to-update v2', version: 2, exposed_to_end_users: false, steps: cleanupSteps().slice(0, 1) });
    expect(detail.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    for (const [version, fields] of [
      [1, ['api_token', 'authorizationid', 'base_url', 'userid']],
      [2, ['api_token', 'base_url']],
    ] as const) {
      const schema = await api(`/api/workflows/types/virtual.${created.composition_uuid}@${version}/schema`);
      expect(schema.status).toBe(200);
      expect(Object.keys(schema.body.input_schema.properties).sort()).toEqual(fields);
    }
    const def = await api(`/api/workflows/types/${created.workflow_type}`);
    expect(def.body).toMatchObject({ workflow_type: created.workflow_type, kind: 'Dag', version: '1.0', exposed_to_end_users: true });
    expect(def.body.states.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(['PENDING', 'RUNNING_INFO', 'RUNNING_REMOVE', 'COMPLETED', 'FAILED']));
  });

  it('a PUT with an invalid body is a 422 and adds no version', async () => {
    const created = await createComposition();
    const res = await api(`/api/compositions/${created.composition_uuid}`, { method: 'PUT', body: { name: 'x', steps: [{ id: 'a', workflow_type: 'nope', inputs: {} }] } });
    expect(res.status).toBe(422);
    expect((await api(`/api/compositions/${created.composition_uuid}`)).body.versions).toHaveLength(1);
  });
});

describe('the catalog and another organization', () => {
  it('lists an organization\'s composed types beside the built-in types, only to that organization', async () => {
    const created = await createComposition();
    const mine = await api('/api/workflows/types');
    expect(mine.body.types.map((t: { workflow_type: string }) => t.workflow_type)).toEqual(expect.arrayContaining([RESOURCES, created.workflow_type]));
    expect(mine.body.namespaces).toContainEqual({ name: 'virtual', count: expect.any(Number) });
    const virtualOnly = await api('/api/workflows/types?prefix=virtual.');
    expect(virtualOnly.body.types.every((t: { kind: string }) => t.kind === 'Dag')).toBe(true);
    // One version format in the catalog: <major>.<minor>, N.0 for virtual.<uuid>@N.
    expect(mine.body.types.filter((t: { version: string }) => !/^\d+\.\d+$/.test(t.version))).toEqual([]);
    expect(mine.body.types).toContainEqual(expect.objectContaining({ workflow_type: created.workflow_type, version: '1.0' }));

    const theirs = await api('/api/workflows/types', { token: stackEnv.tokenB });
    expect(theirs.body.types.map((t: { workflow_type: string }) => t.workflow_type)).not.toContain(created.workflow_type);
    expect(theirs.body.types.map((t: { workflow_type: string }) => t.workflow_type)).toContain(RESOURCES);
  });

  it('answers 404 to another organization on every route, the catalog and a start, exactly as for an unknown one', async () => {
    const created = await createComposition();
    const unknown = `virtual.00000000-0000-4000-8000-000000000000@1`;
    const asB = { token: stackEnv.tokenB };
    for (const path of [`/api/compositions/${created.composition_uuid}`, `/api/workflows/types/${created.workflow_type}`, `/api/workflows/types/${created.workflow_type}/schema`]) {
      const res = await api(path, asB);
      expect({ path, status: res.status, code: res.body.error.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
    const put = await api(`/api/compositions/${created.composition_uuid}`, { ...asB, method: 'PUT', body: { name: 'hijack', steps: cleanupSteps() } });
    expect(put.status).toBe(404);
    expect((await api(`/api/compositions/${created.composition_uuid}`)).body.versions).toHaveLength(1);
    const start = await api('/api/workflows/start', { ...asB, body: { workflow_type: created.workflow_type, initial_data: { userid: 'u', authorizationid: 'a' } } });
    expect(start.status).toBe(404);
    const startUnknown = await api('/api/workflows/start', { body: { workflow_type: unknown, initial_data: {} } });
    expect(startUnknown.status).toBe(404);
    expect((await api('/api/compositions', asB)).body.compositions.map((c: { composition_uuid: string }) => c.composition_uuid)).not.toContain(created.composition_uuid);
  });

  it('refuses a start setting a bound input with 422 bound_input, starting nothing', async () => {
    const created = await createComposition();
    const before = (await api(`/api/workflows?workflow_type=${created.workflow_type}`)).body.runs.length;
    const res = await api('/api/workflows/start', {
      body: {
        workflow_type: created.workflow_type,
        initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN, userid: 'u', authorizationid: 'ok-1', accountid: '9999' },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'initial_data.accountid', rule: 'bound_input', message: expect.stringContaining('bound by the composition') }]);
    const unknownField = await api('/api/workflows/start', { body: { workflow_type: created.workflow_type, initial_data: { userid: 'u', authorizationid: 'a', colour: 'red' } } });
    expect(unknownField.status).toBe(422);
    expect(unknownField.body.error.details).toContainEqual(expect.objectContaining({ field: 'initial_data.colour', rule: 'unknown_field' }));
    expect((await api(`/api/workflows?workflow_type=${created.workflow_type}`)).body.runs.length).toBe(before);
  });

  it("refuses a start leaving a step without what its type needs (base_url, or connection_uuid) with 422 required, starting nothing", async () => {
    const created = await createComposition();
    const before = (await api(`/api/workflows?workflow_type=${created.workflow_type}`)).body.runs.length;
    const res = await api('/api/workflows/start', {
      body: { workflow_type: created.workflow_type, initial_data: { api_token: ESIGN_VALID_TOKEN, userid: 'u', authorizationid: 'ok-1' } },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { field: 'initial_data.base_url', rule: 'required', message: 'is required: step info needs base_url or connection_uuid' },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(ESIGN_VALID_TOKEN);
    expect((await api(`/api/workflows?workflow_type=${created.workflow_type}`)).body.runs.length).toBe(before);
  });
});

describe('composed runs', () => {
  const runInput = (authorizationid: string) => ({
    base_url: stackEnv.esignUrl,
    api_token: ESIGN_VALID_TOKEN,
    userid: uniqueId('user'),
    authorizationid: uniqueId(authorizationid),
  });
  const transitionsOf = async (id: string) => (await api(`/api/workflows/${id}/history`)).body.transitions as Array<{ from: string; to: string; action: string; attempt: number; data: any }>;

  it('starts through POST /api/workflows/start and completes, each step a child run, secrets redacted', async () => {
    const { workflow_type } = await createComposition();
    const input = runInput('ok');
    const id = await startRun(workflow_type, input);
    const run = await waitForTerminal(id);
    expect(run).toMatchObject({ workflow_type, version: '1.0', status: 'COMPLETED', state_name: 'COMPLETED' });
    expect(run.state_data).toMatchObject({
      status: 'succeeded',
      api_token: '[redacted]',
      info: { status_code: 200, api_token: '[redacted]' },
      remove: { status_code: 204, accountid: '4711', userid: input.userid, base_url: stackEnv.esignUrl },
    });
    expect(run.state_data.summary.map((s: any) => [s.step, s.status, s.child_workflow_id])).toEqual([
      ['info', 'succeeded', `${id}.info`],
      ['remove', 'succeeded', `${id}.remove`],
    ]);
    const states = (await transitionsOf(id)).map((t) => t.to);
    expect(states).toEqual(['VALIDATED', 'RUNNING_INFO', 'RUNNING_REMOVE', 'COMPLETED']);

    const child = await api(`/api/workflows/${id}.remove`);
    expect(child.body).toMatchObject({ workflow_type: DELETE, status: 'COMPLETED' });
    const deletes = await esignCalls(`/authorization/${input.authorizationid}`);
    expect(deletes).toHaveLength(1);
    expect(deletes[0].path).toBe(`/api/v2.1/accounts/4711/users/${input.userid}/authorization/${input.authorizationid}`);

    const listed = (await api(`/api/workflows?workflow_type=${encodeURIComponent(workflow_type)}`)).body.runs;
    expect(listed.map((r: { workflow_id: string }) => r.workflow_id)).toContain(id);
    const history = JSON.stringify(await transitionsOf(id));
    expect(secretLeaks({ api_token: ESIGN_VALID_TOKEN }, [['history', history], ['run', JSON.stringify(run)]])).toEqual([]);
  });

  it("fails with failed_step naming the failed step; a retry re-drives that step only and completes", async () => {
    const { workflow_type } = await createComposition();
    const input = runInput('once401');
    const id = await startRun(workflow_type, input);
    const failed = await waitForTerminal(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.state_data).toMatchObject({
      failed_step: 'remove',
      failure_type: 'unauthorized',
      failed_layer: { layer: '02_remove', index: 1, child_workflow_id: `${id}.remove` },
      info: { status_code: 200 },
    });
    expect(failed.state_data.failed_at).toEqual(expect.any(String));
    expect((await api(`/api/workflows/${id}.remove`)).body.status).toBe('FAILED');

    const retry = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(200);
    const done = await waitForTerminal(id);
    expect(done).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(done.state_data.remove).toMatchObject({ status_code: 204 });
    // The completed step did not run again; the failed one did, as attempt 2 of the same child run.
    const transitions = await transitionsOf(id);
    expect(transitions.filter((t) => t.to === 'RUNNING_INFO')).toHaveLength(1);
    expect(transitions.filter((t) => t.to === 'COMPLETED').map((t) => t.attempt)).toEqual([2]);
    expect((await api(`/api/workflows/${id}.info`)).body).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect((await api(`/api/workflows/${id}.remove`)).body).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect(await esignCalls(`/authorization/${input.authorizationid}`)).toHaveLength(2);
  });

  it('refuses a retry of the failed step\'s child run with 409 child_run naming the parent, calling nothing; the parent\'s retry resumes it once', async () => {
    const { workflow_type } = await createComposition();
    const input = runInput('once401');
    const id = await startRun(workflow_type, input);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'FAILED' });

    const childRetry = await api(`/api/workflows/${id}.remove/retry`, { method: 'POST' });
    expect(childRetry.status).toBe(409);
    expect(childRetry.body.error).toMatchObject({ code: 'child_run', details: { parent_workflow_id: id } });
    expect(childRetry.body.error.message).toContain(`/api/workflows/${id}/retry`);
    expect((await api(`/api/workflows/${id}.remove`)).body).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(await esignCalls(`/authorization/${input.authorizationid}`)).toHaveLength(1);

    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).status).toBe(200);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect((await api(`/api/workflows/${id}.remove`)).body).toMatchObject({ status: 'COMPLETED', attempt: 2 });
    expect((await api(`/api/workflows/${id}.remove/history`)).body.transitions.map((t: { attempt: number }) => t.attempt)).toEqual([1, 2]);
    expect(await esignCalls(`/authorization/${input.authorizationid}`)).toHaveLength(2);
  });

  it('refuses to cancel or retry a step\'s child run directly (409 child_run); the parent\'s cancel and retry reach it', async () => {
    const { workflow_type } = await createComposition();
    const input = runInput('hang');
    const id = await startRun(workflow_type, input);
    await waitForState(id, 'RUNNING_REMOVE');
    await waitFor('the provider call', async () => (await esignCalls(input.authorizationid)).length > 0 || undefined);

    const childCancel = await api(`/api/workflows/${id}.remove/cancel`, { method: 'POST' });
    expect(childCancel.status).toBe(409);
    expect(childCancel.body.error).toMatchObject({ code: 'child_run', details: { parent_workflow_id: id } });
    expect(childCancel.body.error.message).toContain(`/api/workflows/${id}/cancel`);
    expect((await api(`/api/workflows/${id}`)).body.status).toBe('RUNNING');

    expect((await api(`/api/workflows/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'CANCELLED' });
    expect(await waitForTerminal(`${id}.remove`)).toMatchObject({ status: 'CANCELLED' });
    const childRetry = await api(`/api/workflows/${id}.remove/retry`, { method: 'POST' });
    expect(childRetry.status).toBe(409);
    expect(childRetry.body.error).toMatchObject({ code: 'child_run', details: { parent_workflow_id: id } });

    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).status).toBe(200);
    await waitFor('the resumed step', async () => (await esignCalls(input.authorizationid)).length > 1 || undefined);
    expect((await api(`/api/workflows/${id}.remove`)).body).toMatchObject({ status: 'RUNNING', attempt: 2 });
    expect((await api(`/api/workflows/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'CANCELLED', attempt: 2 });
  });

  it('version 2 runs beside a running version 1, which keeps its own plan', async () => {
    const { composition_uuid, workflow_type: v1 } = await createComposition();
    const slowInput = runInput('slow');
    const first = await startRun(v1, slowInput);
    await waitForState(first, 'RUNNING_REMOVE');

    const put = await api(`/api/compositions/${composition_uuid}`, { method: 'PUT', body: { name: 'info only', steps: cleanupSteps().slice(0, 1) } });
    expect(put.status).toBe(200);
    const v2 = put.body.workflow_type;
    const second = await startRun(v2, { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN });

    const [one, two] = await Promise.all([waitForTerminal(first), waitForTerminal(second)]);
    expect(one).toMatchObject({ workflow_type: v1, version: '1.0', status: 'COMPLETED' });
    expect(one.state_data.remove).toMatchObject({ status_code: 204 });
    expect(two).toMatchObject({ workflow_type: v2, version: '2.0', status: 'COMPLETED' });
    expect(two.state_data).not.toHaveProperty('remove');
    expect(two.state_data.info).toMatchObject({ status_code: 200 });

    // And version 1 stays startable.
    const again = await startRun(v1, runInput('ok'));
    expect(await waitForTerminal(again)).toMatchObject({ workflow_type: v1, status: 'COMPLETED' });
  });

  it('a schedule starts composed runs like any type', async () => {
    const { workflow_type } = await createComposition();
    const created = await api('/api/schedules', { body: { workflow_type, initial_data: runInput('ok'), interval_seconds: 3600, paused: true } });
    expect(created.status).toBe(201);
    expect(created.body.initial_data.api_token).toBe('[redacted]');
    const scheduleId = created.body.schedule_id;
    try {
      expect((await api(`/api/schedules/${scheduleId}/trigger`, { method: 'POST' })).status).toBe(202);
      const [run] = await waitFor('the scheduled run', async () => {
        const runs = (await api(`/api/workflows?schedule_id=${scheduleId}`)).body.runs;
        return runs.length ? runs : undefined;
      });
      expect(await waitForTerminal(run.workflow_id)).toMatchObject({ workflow_type, status: 'COMPLETED' });
    } finally {
      await api(`/api/schedules/${scheduleId}`, { method: 'DELETE' });
    }
  });

  it('a cancel reaches the running step: the composed run and its child end CANCELLED', async () => {
    const { workflow_type } = await createComposition();
    const id = await startRun(workflow_type, runInput('hang'));
    await waitForState(id, 'RUNNING_REMOVE');
    const cancel = await api(`/api/workflows/${id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    const cancelled = await waitForTerminal(id);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', state_data: { failure_type: 'cancelled', status: 'failed', compensation_trigger: null, compensation_results: null } });
    expect(cancelled.state_data.summary.map((s: any) => [s.step, s.status])).toEqual([
      ['info', 'succeeded'],
      ['remove', 'failed'],
    ]);
    expect(await waitForTerminal(`${id}.remove`)).toMatchObject({ workflow_type: DELETE, status: 'CANCELLED' });
  });
});
