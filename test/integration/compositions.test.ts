import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, stackEnv } from '../support/api';

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
    expect(created.input_schema.required.sort()).toEqual(['authorizationid', 'userid']);
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
  ])('refuses %s with 422 naming the step and field, storing nothing', async (_what, steps, field, rule) => {
    const before = (await api('/api/compositions')).body.compositions.length;
    const res = await api('/api/compositions', { body: { name: 'bad', steps } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ field, rule, message: expect.stringMatching(/^step \w+: /) });
    expect(JSON.stringify(res.body)).not.toContain(ESIGN_VALID_TOKEN);
    expect((await api('/api/compositions')).body.compositions.length).toBe(before);
  });

  it('refuses a malformed body with 422 naming the field', async () => {
    const res = await api('/api/compositions', { body: { name: 'x', steps: [{ id: 'a b', workflow_type: RESOURCES }] } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('steps.0.id');
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

    const put = await api(`/api/compositions/${created.composition_uuid}`, {
      method: 'PUT',
      body: { name: 'to-update v2', steps: cleanupSteps().slice(0, 1) },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ composition_uuid: created.composition_uuid, version: 2, workflow_type: `virtual.${created.composition_uuid}@2` });
    expect(Object.keys(put.body.input_schema.properties).sort()).toEqual(['api_token', 'base_url']);

    const detail = await api(`/api/compositions/${created.composition_uuid}`);
    expect(detail.status).toBe(200);
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
    expect(def.body).toMatchObject({ workflow_type: created.workflow_type, kind: 'Dag', version: '1', exposed_to_end_users: true });
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
});
