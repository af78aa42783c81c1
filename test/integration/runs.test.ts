import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ESIGN_RESOURCES, ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, esignCalls, esignDeleteInput, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { ExtraApi } from '../support/extra-api';

// The integration project's `testTimeout` in jest.config.js is not applied (Jest reads it
// only from the global config), so the default of 5 s would apply without this.
jest.setTimeout(45_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const RESOURCES = 'esign.resources.get-resource-information';
const ONE_MIB = 1024 * 1024;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RESOURCE_LIST = ESIGN_RESOURCES;
/** The run view of the spec; the implementation also returns `version` (see the report). */
const RUN_FIELDS = [
  'workflow_id',
  'workflow_type',
  'version',
  'organization_uuid',
  'state_name',
  'is_terminal',
  'status',
  'attempt',
  'created_at',
  'updated_at',
].sort();

const resourcesInput = () => ({ base_url: stackEnv.esignUrl });
const notFoundBody = (id: string) => ({ error: { code: 'not_found', message: `run ${id} not found`, details: null } });

/** The real CLI, against the stack's database, exactly as auth.test.ts runs it. */
function cli(...args: string[]): string {
  const env = { ...process.env, PORT: '0' } as NodeJS.ProcessEnv;
  if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  else env.DATA_DIR = path.join(process.env.TEST_WORK_DIR!, 'data');
  return execFileSync(process.execPath, ['dist/src/cli.js', ...args], { env, encoding: 'utf8' });
}

/** A fresh organization, so run counts and listings of this suite are exact. */
function freshOrg(name: string): { organization_uuid: string; token: string } {
  return JSON.parse(cli('org', 'create', uniqueId(name), '--json'));
}

/** Every run the token's organization can list, following next_cursor. */
async function listAll(token: string, query = ''): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await api(`/api/workflows?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    expect(res.status).toBe(200);
    all.push(...res.body.runs);
    cursor = res.body.next_cursor;
  } while (cursor);
  return all;
}

function start(body: unknown, token: string, headers: Record<string, string> = {}) {
  return api('/api/workflows/start', { token, body, headers });
}

describe('POST /api/workflows/start', () => {
  let org: { organization_uuid: string; token: string };
  beforeAll(() => {
    org = freshOrg('starter');
  });

  it('answers 201 with the start result and the run exists', async () => {
    const res = await start({ workflow_type: RESOURCES, initial_data: resourcesInput() }, org.token);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ workflow_id: expect.stringMatching(/^wf_[0-9a-z]+$/), state_name: 'PENDING', is_terminal: false });
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    // Readable the moment POST /start answers, before the workflow projects anything itself.
    expect((await api(`/api/workflows/${res.body.workflow_id}`, { token: org.token })).status).toBe(200);
    const run = await waitForTerminal(res.body.workflow_id, org.token);
    expect(run).toMatchObject({ workflow_type: RESOURCES, organization_uuid: org.organization_uuid, status: 'COMPLETED' });
  });

  describe('a rejected request gets its error and starts nothing', () => {
    let before: number;
    beforeEach(async () => {
      before = (await listAll(org.token)).length;
    });
    afterEach(async () => {
      expect((await listAll(org.token)).length).toBe(before);
    });

    it('unknown workflow type: 404 not_found', async () => {
      const res = await start({ workflow_type: 'esign.nope.never-defined', initial_data: {} }, org.token);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: { code: 'not_found', message: 'workflow type esign.nope.never-defined not found', details: null },
      });
    });

    it('initial_data failing validation: 422 naming every failing field with its rule', async () => {
      const res = await start(
        {
          workflow_type: DELETE,
          initial_data: { base_url: 'https://esign.example/v2', accountid: 'not-a-number', surprise: true },
        },
        org.token,
      );
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      const rules = Object.fromEntries(res.body.error.details.map((d: any) => [d.field, d.rule]));
      expect(rules).toEqual({
        'initial_data.base_url': 'api_root',
        'initial_data.accountid': 'format:regex',
        'initial_data.authorizationid': 'required',
        'initial_data.userid': 'required',
        'initial_data.surprise': 'unknown_field',
      });
      expect(res.body.error.details).toHaveLength(5);
      for (const d of res.body.error.details) {
        expect(d).toEqual({ field: d.field, rule: d.rule, message: expect.any(String) });
        expect(res.body.error.message).toContain(d.field);
      }
    });

    it.each([
      ['..', '..', ['authorizationid', 'userid']],
      ['.', uniqueId('ok'), ['userid']],
    ])('ids URL parsing would collapse (userid %j): 422 naming each with its rule, and the provider is never called', async (userid, authorizationid, fields) => {
      const accountid = '4711';
      const callsBefore = (await esignCalls(`/accounts/${accountid}`)).length;
      const res = await start(
        { workflow_type: DELETE, initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN, accountid, userid, authorizationid } },
        org.token,
      );
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual(
        fields.map((f) => ({ field: `initial_data.${f}`, rule: 'format:regex', message: "must be a provider id: 1-100 letters, digits, '-' or '_'" })),
      );
      expect((await esignCalls(`/accounts/${accountid}`)).length).toBe(callsBefore);
    });

    it.each([['bad\ntoken'], ['tok\u0100en']])('an api_token no HTTP header can carry (%j): 422 naming it, not a run failing unreachable', async (token) => {
      const res = await start({ workflow_type: DELETE, initial_data: { ...esignDeleteInput('ok'), api_token: token } }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'initial_data.api_token', rule: 'format:regex', message: expect.stringContaining('visible ASCII') }]);
    });

    it.each([
      ['a string value', { base_url: 'https://esign.example/v2\u0000' }, 'initial_data.base_url'],
      ['a key', { base_url: 'https://esign.example/v2', 'a\u0000b': 1 }, 'initial_data.a\\u0000b'],
      ['a nested string', { base_url: 'https://esign.example/v2', deep: [{ x: '\u0000' }] }, 'initial_data.deep.0.x'],
    ])('a NUL character in %s of initial_data: 422 naming the field (Postgres would refuse it)', async (_, initialData, field) => {
      const res = await start({ workflow_type: RESOURCES, initial_data: initialData }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({
        code: 'validation_failed',
        message: `${field}: must not contain the NUL character (U+0000)`,
        details: [{ field, rule: 'no_nul_character', message: 'must not contain the NUL character (U+0000)' }],
      });
    });

    it.each([['not a url'], [''], ['https://']])('a base_url that does not parse as a URL (%j): 422, never a 500', async (baseUrl) => {
      const res = await start({ workflow_type: RESOURCES, initial_data: { base_url: baseUrl } }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: any) => d.field)).toContain('initial_data.base_url');
      for (const d of res.body.error.details) expect(d).toEqual({ field: 'initial_data.base_url', rule: expect.any(String), message: expect.any(String) });
    });

    it('plain http to a host outside ALLOW_HTTP_HOSTS: 422 outbound_policy', async () => {
      const res = await start({ workflow_type: RESOURCES, initial_data: { base_url: 'http://esign.example/api' } }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { field: 'initial_data.base_url', rule: 'outbound_policy', message: expect.stringContaining('https') },
      ]);
    });

    it('body without workflow_type and initial_data: 422 naming both', async () => {
      const res = await start({}, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({
        code: 'validation_failed',
        message: expect.stringContaining('workflow_type'),
        details: [
          { field: 'workflow_type', rule: 'required', message: 'is required' },
          { field: 'initial_data', rule: 'required', message: 'is required' },
        ],
      });
    });

    it.each([
      ['an array', [{ base_url: 'x' }]],
      ['a string', 'base_url=x'],
      ['null', null],
      ['a number', 42],
    ])('initial_data that is %s: 422 naming initial_data', async (_, initialData) => {
      const res = await start({ workflow_type: RESOURCES, initial_data: initialData }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({
        code: 'validation_failed',
        message: expect.stringContaining('initial_data'),
        details: [{ field: 'initial_data', rule: 'invalid_type', message: expect.any(String) }],
      });
    });

    it('malformed JSON: 400 malformed_json', async () => {
      const res = await api('/api/workflows/start', { token: org.token, rawBody: `{"workflow_type": "${RESOURCES}", "initial_data": {` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'malformed_json', message: expect.any(String), details: null } });
    });

    it.each([
      ['null', 'null'],
      ['a string', '"x"'],
      ['a number', '5'],
      ['an array', '[]'],
    ])('a JSON body that is %s, not an object: 422 naming (body), nothing started', async (_, rawBody) => {
      const before = (await api('/api/workflows?limit=100', { token: org.token })).body.runs.length;
      const res = await api('/api/workflows/start', { token: org.token, rawBody });
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({
        code: 'validation_failed',
        message: expect.stringContaining('(body)'),
        details: [{ field: '(body)', rule: 'invalid_type', message: expect.stringContaining('expected object') }],
      });
      expect((await api('/api/workflows?limit=100', { token: org.token })).body.runs.length).toBe(before);
    });

    it('a JSON body sent as another media type: 415 unsupported_media_type, nothing started', async () => {
      const body = JSON.stringify({ workflow_type: RESOURCES, initial_data: resourcesInput() });
      for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
        const res = await api('/api/workflows/start', { token: org.token, rawBody: body, headers: { 'content-type': type } });
        expect(res.status).toBe(415);
        expect(res.body).toEqual({ error: { code: 'unsupported_media_type', message: expect.stringContaining('application/json'), details: null } });
      }
    });

    it('a body over 1 MiB: 413 payload_too_large (exactly 1 MiB is still read)', async () => {
      const head = `{"workflow_type":"${RESOURCES}","initial_data":{"base_url":"${stackEnv.esignUrl}","pad":"`;
      const tail = '"}}';
      const ofLength = (n: number) => head + 'x'.repeat(n - head.length - tail.length) + tail;

      const atLimit = await api('/api/workflows/start', { token: org.token, rawBody: ofLength(ONE_MIB) });
      expect(atLimit.status).toBe(422); // read, then refused by the initial_data size cap (64 KiB)
      expect(atLimit.body.error.details).toEqual([
        { field: 'initial_data', rule: 'max_size', message: expect.stringContaining('the limit is 65536') },
      ]);

      const over = await api('/api/workflows/start', { token: org.token, rawBody: ofLength(ONE_MIB + 1) });
      expect(over.status).toBe(413);
      expect(over.body).toEqual({ error: { code: 'payload_too_large', message: expect.any(String), details: null } });
    });

    it('unknown top-level field: 422 unknown_field', async () => {
      const res = await start({ workflow_type: RESOURCES, initial_data: resourcesInput(), organization_uuid: stackEnv.orgB }, org.token);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { field: 'organization_uuid', rule: 'unknown_field', message: 'is not a field of this schema' },
      ]);
    });
  });
});

describe('a start Temporal refuses (an API process on a namespace that does not exist)', () => {
  const extra = new ExtraApi({ TEMPORAL_ADDRESS: stackEnv.temporalAddress, TEMPORAL_NAMESPACE: uniqueId('no-such-namespace') });
  let token: string;
  beforeAll(async () => {
    await extra.start();
    token = JSON.parse(extra.cli(['org', 'create', uniqueId('refused'), '--json'])).token;
  });
  afterAll(() => extra.stop());

  it('answers an error and leaves no run behind (a run is registered only once Temporal has it)', async () => {
    const call = (path: string, body?: unknown) =>
      fetch(`${extra.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(20_000),
      });
    const res = await call('/api/workflows/start', { workflow_type: RESOURCES, initial_data: { base_url: 'https://esign.invalid/api' } });
    expect(res.status).toBeGreaterThanOrEqual(500);
    const list = await call('/api/workflows');
    expect(((await list.json()) as { runs: unknown[] }).runs).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  it('same key and body: the same run (replayed), whatever the key order; different body: 409', async () => {
    const key = uniqueId('idem');
    const runsBefore = (await listAll(stackEnv.tokenA)).length;
    const first = await api('/api/workflows/start', {
      rawBody: JSON.stringify({ workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN } }),
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const replay = await api('/api/workflows/start', {
      rawBody: JSON.stringify({ initial_data: { api_token: ESIGN_VALID_TOKEN, base_url: stackEnv.esignUrl }, workflow_type: RESOURCES }),
      headers: { 'idempotency-key': key },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.workflow_id).toBe(first.body.workflow_id);

    const conflict = await api('/api/workflows/start', {
      body: { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl } },
      headers: { 'idempotency-key': key },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: { code: 'idempotency_key_reused', message: expect.any(String), details: null } });

    const after = await listAll(stackEnv.tokenA);
    expect(after.length).toBe(runsBefore + 1);
    expect(after.filter((r) => r.workflow_id === first.body.workflow_id)).toHaveLength(1);

    // Still the same run after it ended.
    await waitForTerminal(first.body.workflow_id);
    const late = await api('/api/workflows/start', {
      body: { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN } },
      headers: { 'idempotency-key': key },
    });
    expect(late.status).toBe(201);
    expect(late.body).toEqual({ workflow_id: first.body.workflow_id, state_name: 'COMPLETED', is_terminal: true });
  });

  it('keys are per organization: org B reusing org A key and body gets its own run', async () => {
    const key = uniqueId('idem-shared');
    const body = { workflow_type: RESOURCES, initial_data: resourcesInput() };
    const a = await start(body, stackEnv.tokenA, { 'idempotency-key': key });
    const b = await start(body, stackEnv.tokenB, { 'idempotency-key': key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.workflow_id).not.toBe(a.body.workflow_id);
    expect((await api(`/api/workflows/${b.body.workflow_id}`, { token: stackEnv.tokenB })).body.organization_uuid).toBe(stackEnv.orgB);
    expect((await api(`/api/workflows/${b.body.workflow_id}`)).status).toBe(404);
    // And each organization replays its own.
    const a2 = await start(body, stackEnv.tokenA, { 'idempotency-key': key });
    const b2 = await start(body, stackEnv.tokenB, { 'idempotency-key': key });
    expect([a2.body.workflow_id, b2.body.workflow_id]).toEqual([a.body.workflow_id, b.body.workflow_id]);
    expect([a2.headers.get('idempotent-replayed'), b2.headers.get('idempotent-replayed')]).toEqual(['true', 'true']);
  });

  it('concurrent duplicates: one run, and every answer but the one that claimed the key says replayed', async () => {
    const org = freshOrg('idem-race');
    const body = { workflow_type: RESOURCES, initial_data: resourcesInput() };
    const answers = await Promise.all(Array.from({ length: 5 }, () => start(body, org.token, { 'idempotency-key': 'race-1' })));
    expect(answers.map((a) => a.status)).toEqual(Array(5).fill(201));
    expect(new Set(answers.map((a) => a.body.workflow_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(await listAll(org.token)).toHaveLength(1);
  });

  it('a malformed key is a 422 and starts nothing', async () => {
    const org = freshOrg('idem-bad');
    const res = await start({ workflow_type: RESOURCES, initial_data: resourcesInput() }, org.token, { 'idempotency-key': 'has spaces' });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'Idempotency-Key', rule: 'format', message: expect.any(String) }]);
    expect(await listAll(org.token)).toEqual([]);
  });
});

describe('GET /api/workflows', () => {
  let org: { organization_uuid: string; token: string };
  /** In creation order. */
  const created: Array<{ id: string; type: string; status: string; state: string }> = [];
  const newestFirst = (pick: (r: (typeof created)[number]) => boolean = () => true) =>
    created.filter(pick).map((r) => r.id).reverse();

  beforeAll(async () => {
    org = freshOrg('lister');
    const plan: Array<[string, Record<string, unknown>, string, string]> = [
      [RESOURCES, resourcesInput(), 'COMPLETED', 'COMPLETED'],
      [DELETE, esignDeleteInput('missing'), 'FAILED', 'FAILED'],
      [DELETE, esignDeleteInput('hang'), 'RUNNING', 'PENDING'], // stays PENDING ~10 s (timeouts, retries)
      [RESOURCES, resourcesInput(), 'COMPLETED', 'COMPLETED'],
      [DELETE, esignDeleteInput('ok'), 'COMPLETED', 'COMPLETED'],
      [DELETE, esignDeleteInput('missing'), 'FAILED', 'FAILED'],
      [RESOURCES, resourcesInput(), 'COMPLETED', 'COMPLETED'],
    ];
    for (const [type, input, status, state] of plan) {
      created.push({ id: await startRun(type, input, org.token), type, status, state });
    }
    for (const r of created) if (r.status !== 'RUNNING') await waitForTerminal(r.id, org.token);
  });

  const ids = async (query: string, token = org.token) => {
    const res = await api(`/api/workflows${query}`, { token });
    expect(res.status).toBe(200);
    return res.body.runs.map((r: any) => r.workflow_id);
  };

  it('lists the organization runs newest first, each in the run view', async () => {
    const res = await api('/api/workflows', { token: org.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['next_cursor', 'runs']);
    expect(res.body.runs.map((r: any) => r.workflow_id)).toEqual(newestFirst());
    expect(res.body.next_cursor).toBeNull();
    for (const run of res.body.runs) {
      const one = await api(`/api/workflows/${run.workflow_id}`, { token: org.token });
      expect(run).toEqual(one.body);
      expect(run.organization_uuid).toBe(org.organization_uuid);
    }
  });

  it('filters by workflow_type, status and state_name', async () => {
    expect(await ids(`?workflow_type=${DELETE}`)).toEqual(newestFirst((r) => r.type === DELETE));
    expect(await ids(`?workflow_type=${RESOURCES}`)).toEqual(newestFirst((r) => r.type === RESOURCES));
    expect(await ids('?status=FAILED')).toEqual(newestFirst((r) => r.status === 'FAILED'));
    expect(await ids('?status=COMPLETED')).toEqual(newestFirst((r) => r.status === 'COMPLETED'));
    expect(await ids('?status=RUNNING')).toEqual(newestFirst((r) => r.status === 'RUNNING'));
    expect(await ids('?state_name=PENDING')).toEqual(newestFirst((r) => r.state === 'PENDING'));
    expect(await ids('?state_name=FAILED')).toEqual(newestFirst((r) => r.state === 'FAILED'));
    expect(await ids(`?state_name=COMPLETED&workflow_type=${DELETE}`)).toEqual(
      newestFirst((r) => r.state === 'COMPLETED' && r.type === DELETE),
    );
    expect(await ids('?workflow_type=esign.nope.never-defined')).toEqual([]);
  });

  it('limit + next_cursor visit every run exactly once, in order', async () => {
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      const pageSizes: number[] = [];
      let cursor: string | null = null;
      do {
        const res: any = await api(`/api/workflows?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
          token: org.token,
        });
        expect(res.status).toBe(200);
        pageSizes.push(res.body.runs.length);
        seen.push(...res.body.runs.map((r: any) => r.workflow_id));
        cursor = res.body.next_cursor;
      } while (cursor && pageSizes.length < 20);
      expect(seen).toEqual(newestFirst());
      const n = created.length;
      expect(pageSizes).toEqual([...Array(Math.ceil(n / limit)).keys()].map((i) => Math.min(limit, n - i * limit)));
    }
    // A page that ends exactly at the last run has no next page.
    const exact = await api(`/api/workflows?limit=${created.length}`, { token: org.token });
    expect(exact.body.next_cursor).toBeNull();
    // Pagination composes with filters.
    const first = await api(`/api/workflows?limit=1&workflow_type=${DELETE}`, { token: org.token });
    const second = await api(`/api/workflows?limit=100&workflow_type=${DELETE}&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
      token: org.token,
    });
    expect([...first.body.runs, ...second.body.runs].map((r: any) => r.workflow_id)).toEqual(newestFirst((r) => r.type === DELETE));
  });

  it('is organization-scoped: nobody sees another organization runs', async () => {
    const mine = newestFirst();
    const [a, b] = [await listAll(stackEnv.tokenA), await listAll(stackEnv.tokenB)];
    for (const [list, orgUuid] of [
      [a, stackEnv.orgA],
      [b, stackEnv.orgB],
    ] as const) {
      expect(list.filter((r) => mine.includes(r.workflow_id))).toEqual([]);
      expect(list.every((r) => r.organization_uuid === orgUuid)).toBe(true);
    }
    const aRun = await startRun(RESOURCES, resourcesInput());
    expect((await listAll(stackEnv.tokenB)).map((r) => r.workflow_id)).not.toContain(aRun);
    expect((await listAll(stackEnv.tokenA)).map((r) => r.workflow_id)).toContain(aRun);
    await waitForTerminal(aRun);
  });

  it.each([
    ['0', 'minimum'],
    ['101', 'maximum'],
    ['x', 'integer'],
    ['2.5', 'integer'],
    // Number's own syntax, which is not the integer the document declares.
    ['0x5', 'integer'],
    ['1e1', 'integer'],
    ['%205', 'integer'],
  ])('limit=%s is a 422', async (limit, rule) => {
    const res = await api(`/api/workflows?limit=${limit}`, { token: org.token });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'validation_failed',
      message: expect.stringContaining('limit'),
      details: [{ field: 'limit', rule, message: expect.any(String) }],
    });
  });

  it('rejects an unknown status with 422 and a forged cursor with 400 invalid_cursor', async () => {
    const status = await api('/api/workflows?status=DONE', { token: org.token });
    expect(status.status).toBe(422);
    expect(status.body.error.details).toEqual([{ field: 'status', rule: 'invalid_value', message: expect.any(String) }]);
    const cursor = await api('/api/workflows?cursor=bm90LWEtY3Vyc29y', { token: org.token });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error).toMatchObject({ code: 'invalid_cursor', details: [{ field: 'cursor', rule: 'invalid_cursor', message: expect.any(String) }] });
  });
});

describe('a NUL character in a path or query parameter', () => {
  it.each([
    ['/api/workflows?workflow_type=a%00b', 'workflow_type'],
    ['/api/workflows?state_name=%00', 'state_name'],
    ['/api/workflows/wf_%00', 'id'],
    ['/api/workflows/wf_%00/history', 'id'],
    ['/api/workflows/wf_%00/stream', 'id'],
    ['/api/connections?plugin=esign%00', 'plugin'],
    ['/api/workflows/types/esign%00', 'type'],
  ])('GET %s: 422 naming %s, never a 500', async (url, field) => {
    const res = await api(url);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field, rule: 'no_nul_character', message: expect.any(String) }]);
  });

  it('POST retry of an id with a NUL: 422', async () => {
    const res = await api('/api/workflows/wf_%00/retry', { method: 'POST' });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe('id');
  });
});

describe('GET /api/workflows/{id}', () => {
  it('a running run: the run view without state_data', async () => {
    const before = Date.now();
    const id = await startRun(DELETE, esignDeleteInput('hang'));
    const res = await api(`/api/workflows/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(RUN_FIELDS);
    expect(res.body).toEqual({
      workflow_id: id,
      workflow_type: DELETE,
      version: '1.0',
      organization_uuid: stackEnv.orgA,
      state_name: 'PENDING',
      is_terminal: false,
      status: 'RUNNING',
      attempt: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('a finished run: the run view plus state_data', async () => {
    const id = await startRun(RESOURCES, resourcesInput());
    const ended = await waitForTerminal(id);
    const res = await api(`/api/workflows/${id}`);
    expect(res.body).toEqual(ended);
    expect(Object.keys(res.body).sort()).toEqual([...RUN_FIELDS, 'state_data'].sort());
    expect(res.body).toEqual({
      workflow_id: id,
      workflow_type: RESOURCES,
      version: '1.0',
      organization_uuid: stackEnv.orgA,
      state_name: 'COMPLETED',
      is_terminal: true,
      status: 'COMPLETED',
      attempt: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      state_data: { base_url: stackEnv.esignUrl, status_code: 200, response: RESOURCE_LIST },
    });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(res.body.created_at));
  });
});

describe('another organization run is a 404, exactly like an unknown id', () => {
  it('GET, history, stream and retry by org B of org A run', async () => {
    const id = await startRun(DELETE, esignDeleteInput('missing'));
    const failed = await waitForTerminal(id);
    expect(failed.status).toBe('FAILED'); // so org A itself could retry it
    const unknown = `wf_${'0'.repeat(10)}${'ab'.repeat(10)}`;

    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/history'],
      ['GET', '/stream'],
      ['POST', '/retry'],
    ] as const) {
      const theirs = await api(`/api/workflows/${id}${suffix}`, { token: stackEnv.tokenB, method });
      const missing = await api(`/api/workflows/${unknown}${suffix}`, { token: stackEnv.tokenB, method });
      expect([method + suffix, theirs.status]).toEqual([method + suffix, 404]);
      expect(missing.status).toBe(404);
      expect(theirs.body).toEqual(notFoundBody(id));
      expect(missing.body).toEqual(notFoundBody(unknown));
      expect(theirs.headers.get('content-type')).toBe(missing.headers.get('content-type'));
    }
    const stream = await readStream(id, { token: stackEnv.tokenB, timeoutMs: 5_000 });
    expect(stream.status).toBe(404);
    expect(stream.contentType).toMatch(/^application\/json/);

    // Org B's retry attempt changed nothing.
    const after = await api(`/api/workflows/${id}`);
    expect(after.body).toEqual(failed);
    expect((await api(`/api/workflows/${id}/history`)).body.transitions).toHaveLength(1);
  });
});

describe('POST /api/workflows/{id}/retry', () => {
  it('a COMPLETED run and a RUNNING run are a 409', async () => {
    const done = await startRun(RESOURCES, resourcesInput());
    await waitForTerminal(done);
    const res = await api(`/api/workflows/${done}/retry`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: { code: 'not_failed', message: expect.stringContaining('COMPLETED'), details: null } });

    const running = await startRun(DELETE, esignDeleteInput('hang'));
    const res2 = await api(`/api/workflows/${running}/retry`, { method: 'POST' });
    expect(res2.status).toBe(409);
    expect(res2.body.error.code).toBe('not_failed');
    expect((await api(`/api/workflows/${running}`)).body).toMatchObject({ attempt: 1, status: 'RUNNING' });
  });

  it('a FAILED run is re-driven under the same id: attempt 2, history continues, COMPLETED', async () => {
    const input = esignDeleteInput('once401'); // 401 (non-retryable) on the first call, 204 after
    const id = await startRun(DELETE, input);
    const failed = await waitForTerminal(id);
    expect(failed).toMatchObject({ status: 'FAILED', state_name: 'FAILED', attempt: 1 });
    expect(failed.state_data).toMatchObject({ status_code: 401, failure_type: 'unauthorized', failed_step: 'execute' });

    const res = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ workflow_id: id, state_name: 'PENDING', is_terminal: false });
    const reopened = await api(`/api/workflows/${id}`);
    expect(reopened.body).toMatchObject({ workflow_id: id, status: 'RUNNING', is_terminal: false, attempt: 2 });
    expect(reopened.body).not.toHaveProperty('state_data');

    const ended = await waitForTerminal(id);
    expect(ended).toMatchObject({ workflow_id: id, status: 'COMPLETED', state_name: 'COMPLETED', attempt: 2 });
    // Resumed from the last good state's data: no failure field of attempt 1 survives.
    expect(ended.state_data).toEqual({ ...input, api_token: '[redacted]', status_code: 204, response: null });

    const history = await api(`/api/workflows/${id}/history`);
    expect(history.status).toBe(200);
    expect(history.body.workflow_id).toBe(id);
    expect(
      history.body.transitions.map((t: any) => ({ seq: t.seq, from: t.from, to: t.to, action: t.action, attempt: t.attempt })),
    ).toEqual([
      { seq: 1, from: 'PENDING', to: 'FAILED', action: 'fail', attempt: 1 },
      { seq: 2, from: 'PENDING', to: 'COMPLETED', action: 'execute', attempt: 2 },
    ]);
    expect(history.body.transitions[1].data).toEqual({ status_code: 204, response: null });
    expect(Date.parse(history.body.transitions[1].at)).toBeGreaterThanOrEqual(Date.parse(history.body.transitions[0].at));

    expect(await esignCalls(input.authorizationid)).toHaveLength(2);
    // Completed now: a second retry is refused.
    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).status).toBe(409);
    // Still one run with that id in the listing.
    expect((await listAll(stackEnv.tokenA)).filter((r) => r.workflow_id === id)).toHaveLength(1);
  });
  it('concurrent retries of one failure re-drive it once: one 200, the others 409 retry_in_progress', async () => {
    const input = esignDeleteInput('missing'); // 404 (non-retryable) at every call: each attempt fails at once
    const id = await startRun(DELETE, input);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'FAILED', attempt: 1 });

    const answers = await Promise.all(Array.from({ length: 10 }, () => api(`/api/workflows/${id}/retry`, { method: 'POST' })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    for (const refused of answers.filter((r) => r.status === 409)) {
      expect(refused.body).toEqual({ error: { code: 'retry_in_progress', message: 'this run is already being retried', details: null } });
    }
    expect(await waitForTerminal(id)).toMatchObject({ status: 'FAILED', attempt: 2 });
    // Long enough for a second re-drive of the retry's own failure to have started and called.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await api(`/api/workflows/${id}`)).body).toMatchObject({ status: 'FAILED', attempt: 2 });
    expect(await esignCalls(input.authorizationid)).toHaveLength(2);
    const history = (await api(`/api/workflows/${id}/history`)).body.transitions;
    expect(history.map((t: any) => [t.seq, t.attempt])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    // The retry's failure is re-driven by the next request, not refused.
    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).status).toBe(200);
    expect(await waitForTerminal(id)).toMatchObject({ status: 'FAILED', attempt: 3 });
  });

  it('a retry sent the moment the stream reports failed is accepted (the execution may not have closed yet)', async () => {
    const input = esignDeleteInput('once401');
    const id = await startRun(DELETE, input);
    const stream = await readStream(id);
    expect(stream.events.at(-1)?.event).toBe('failed');
    const res = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await waitForTerminal(id)).status).toBe('COMPLETED');
  });
});
