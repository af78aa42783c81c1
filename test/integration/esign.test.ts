import fs from 'node:fs';
import { ESIGN_BODIES, ESIGN_RESOURCES, ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, esignCalls, freshOrgToken, readStream, secretLeaks, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

/**
 * The two e-signature workflow types end to end: through the real HTTP API,
 * the real worker (PROVIDER_TIMEOUT_MS=1500, an ESIGN_API_TOKEN for another origin, 4 attempts
 * backing off from 500 ms) and the loopback e-signature double, whose
 * authorization-id prefix picks its behaviour.
 */

// The hang and 503 runs take ~10 s and ~5 s; don't depend on jest.config.js for the
// timeout (a per-project testTimeout is ignored by Jest and used to leave 5 s).
jest.setTimeout(60_000);

const DELETE_TYPE = 'esign.authorizations.delete-user-authorization';
const RESOURCES_TYPE = 'esign.resources.get-resource-information';

/** A token the double refuses; distinctive so the secret checks cannot match by accident. */
const WRONG_TOKEN = `${uniqueId('wrong-esign-token')}-zq7`;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const { authFailed: AUTH_FAILED, notFound: NOT_FOUND, unavailable: UNAVAILABLE } = ESIGN_BODIES;
const RESOURCES = ESIGN_RESOURCES;

type Call = { method: string; path: string; authorization: string | null; at: number };

/** Every run this file starts: the secret checks read all of them back. */
const started: string[] = [];
/** Raw SSE text of every stream this file read. */
const streamTexts: string[] = [];

async function start(type: string, initialData: Record<string, unknown>): Promise<string> {
  const id = await startRun(type, initialData);
  started.push(id);
  return id;
}

function deleteInput(behaviour: string, apiToken?: string) {
  const input: Record<string, string> = {
    base_url: stackEnv.esignUrl,
    accountid: `${Date.now() % 1_000_000_000}${Math.floor(Math.random() * 1000)}`,
    userid: uniqueId('user'),
    authorizationid: uniqueId(behaviour),
  };
  if (apiToken !== undefined) input.api_token = apiToken;
  const doublePath = `/api/v2.1/accounts/${input.accountid}/users/${input.userid}/authorization/${input.authorizationid}`;
  return { input, doublePath };
}

/** Calls the double received on exactly this path. */
async function callsTo(exactPath: string): Promise<Call[]> {
  return ((await esignCalls(exactPath)) as Call[]).filter((c) => c.path === exactPath);
}

async function allCalls(): Promise<Call[]> {
  return (await esignCalls('')) as Call[];
}

const strip = (calls: Call[]) => calls.map(({ method, path: p, authorization }) => ({ method, path: p, authorization }));

/** The whole SSE response as text (the server closes it after the terminal event). */
async function rawStream(workflowId: string): Promise<string> {
  const res = await fetch(`${stackEnv.apiUrl}/api/workflows/${workflowId}/stream`, {
    headers: { authorization: `Bearer ${stackEnv.tokenA}`, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  streamTexts.push(text);
  return text;
}

function expectIsoTimestamp(value: unknown) {
  expect(value).toEqual(expect.stringMatching(ISO_TIMESTAMP));
  expect(new Date(value as string).toISOString()).toBe(value);
}

describe('esign.authorizations.delete-user-authorization', () => {
  it('succeeds against the double: 204, empty response, inputs echoed, token redacted, one exact DELETE', async () => {
    const { input, doublePath } = deleteInput('ok', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);

    expect(run).toMatchObject({
      workflow_id: id,
      workflow_type: DELETE_TYPE,
      organization_uuid: stackEnv.orgA,
      state_name: 'COMPLETED',
      is_terminal: true,
      status: 'COMPLETED',
      attempt: 1,
    });
    expect(run.state_data).toEqual({
      base_url: stackEnv.esignUrl,
      api_token: '[redacted]',
      accountid: input.accountid,
      userid: input.userid,
      authorizationid: input.authorizationid,
      status_code: 204,
      response: null,
    });
    expect(run.state_data).toHaveProperty('response', null);

    expect(strip(await callsTo(doublePath))).toEqual([
      { method: 'DELETE', path: doublePath, authorization: `Bearer ${ESIGN_VALID_TOKEN}` },
    ]);

    const history = await api(`/api/workflows/${id}/history`);
    expect(history.status).toBe(200);
    expect(history.body.workflow_id).toBe(id);
    expect(history.body.transitions).toHaveLength(1);
    expect(history.body.transitions[0]).toMatchObject({ seq: 1, from: 'PENDING', to: 'COMPLETED', action: 'execute' });
    expect(history.body.transitions[0].data).toEqual({ status_code: 204, response: null });
    expectIsoTimestamp(history.body.transitions[0].at);
  });

  it('a wrong token (401) fails the run at once with the provider error kept and the failure fields set', async () => {
    const { input, doublePath } = deleteInput('ok', WRONG_TOKEN);
    const startedAt = Date.now();
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    const elapsed = Date.now() - startedAt;

    expect(run).toMatchObject({ workflow_id: id, state_name: 'FAILED', is_terminal: true, status: 'FAILED', attempt: 1 });
    const data = run.state_data;
    expect(data.status_code).toBe(401);
    expect(data.response).toEqual(AUTH_FAILED);
    expect(data.failure_reason).toEqual(expect.stringContaining(AUTH_FAILED.errorCode));
    expect(data.failure_reason).toEqual(expect.stringContaining(AUTH_FAILED.message));
    expect(data.failure_type).toBe('unauthorized');
    expect(data.failed_at_state).toBe('pending');
    expect(data.failed_step).toBe('execute');
    expect(data.failed_layer).toBe('activity');
    expectIsoTimestamp(data.failed_at);
    expect(data.error).toEqual(expect.stringContaining(AUTH_FAILED.errorCode));
    expect(data.error_type).toBe('unauthorized');
    expect(data).toMatchObject({
      base_url: stackEnv.esignUrl,
      api_token: '[redacted]',
      accountid: input.accountid,
      userid: input.userid,
      authorizationid: input.authorizationid,
    });

    // Non-retryable: exactly one call, and no backoff was waited for (the first retry would come after 500 ms + 1 call).
    const calls = await callsTo(doublePath);
    expect(strip(calls)).toEqual([{ method: 'DELETE', path: doublePath, authorization: `Bearer ${WRONG_TOKEN}` }]);
    expect(elapsed).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await callsTo(doublePath)).toHaveLength(1);

    const history = await api(`/api/workflows/${id}/history`);
    expect(history.body.transitions).toHaveLength(1);
    expect(history.body.transitions[0]).toMatchObject({ seq: 1, from: 'PENDING', to: 'FAILED', action: 'fail' });
    expect(history.body.transitions[0].data).toMatchObject({ status_code: 401, response: AUTH_FAILED, failure_type: 'unauthorized' });
  });

  it('404 (missing-…) fails with failure_type not_found after exactly one call', async () => {
    const { input, doublePath } = deleteInput('missing', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({
      status_code: 404,
      response: NOT_FOUND,
      failure_type: 'not_found',
      failed_step: 'execute',
      failed_at_state: 'pending',
    });
    expect(run.state_data.failure_reason).toEqual(expect.stringContaining('RESOURCE_NOT_FOUND'));
    expect(run.state_data.failure_reason).toEqual(expect.stringContaining(NOT_FOUND.message));
    expect(await callsTo(doublePath)).toHaveLength(1);
  });

  it('500 then success (flaky-…) is retried once and completes: exactly two calls', async () => {
    const { input, doublePath } = deleteInput('flaky', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toMatchObject({ status_code: 204, response: null });
    expect(run.state_data.failure_type).toBeUndefined();
    const calls = await callsTo(doublePath);
    expect(strip(calls)).toEqual([
      { method: 'DELETE', path: doublePath, authorization: `Bearer ${ESIGN_VALID_TOKEN}` },
      { method: 'DELETE', path: doublePath, authorization: `Bearer ${ESIGN_VALID_TOKEN}` },
    ]);
    // The retry waited for the initial backoff interval (500 ms).
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(400);
    const history = await api(`/api/workflows/${id}/history`);
    expect(history.body.transitions.map((t: { seq: number; action: string; to: string }) => [t.seq, t.action, t.to])).toEqual([
      [1, 'execute', 'COMPLETED'],
    ]);
  });

  it('always 503 (down-…) fails after exactly 4 calls with backoff, server_error, status_code 503 kept', async () => {
    const { input, doublePath } = deleteInput('down', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({
      status_code: 503,
      response: UNAVAILABLE,
      failure_type: 'server_error',
      error_type: 'server_error',
      failed_step: 'execute',
      failed_at_state: 'pending',
    });
    expect(run.state_data.failure_reason).toEqual(expect.stringContaining('SERVICE_UNAVAILABLE'));
    // Give a would-be fifth attempt time to show up (the next backoff would be 4 s, but the run is terminal).
    await new Promise((r) => setTimeout(r, 500));
    const calls = await callsTo(doublePath);
    expect(calls).toHaveLength(4);
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i].at);
    // Backoff 500 ms, 1 s, 2 s (coefficient 2), with a little scheduling slack.
    expect(gaps[0]).toBeGreaterThanOrEqual(400);
    expect(gaps[1]).toBeGreaterThanOrEqual(900);
    expect(gaps[2]).toBeGreaterThanOrEqual(1_800);
  });

  it('a provider that never answers (hang-…) fails with failure_type timeout after 4 bounded attempts', async () => {
    const { input, doublePath } = deleteInput('hang', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({
      failure_type: 'timeout',
      error_type: 'timeout',
      failed_step: 'execute',
      failed_at_state: 'pending',
      failure_reason: 'e-signature API did not answer within 1500 ms',
    });
    expect(run.state_data.status_code).toBeUndefined();
    expectIsoTimestamp(run.state_data.failed_at);
    expect(await callsTo(doublePath)).toHaveLength(4);
  });

  it('no api_token, and ESIGN_API_TOKEN belongs to another origin: missing_credentials, and zero calls reach the double', async () => {
    const { input, doublePath } = deleteInput('ok');
    const before = (await allCalls()).length;
    const id = await start(DELETE_TYPE, input);
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({
      failure_type: 'missing_credentials',
      failure_reason:
        'no e-signature API token may be sent to this base_url: pass api_token or connection_uuid (ESIGN_API_TOKEN goes only to the origin of ESIGN_API_BASE_URL)',
      failed_step: 'execute',
      failed_at_state: 'pending',
    });
    expect(run.state_data).not.toHaveProperty('api_token');
    expect(run.state_data.status_code).toBeUndefined();
    expect(await callsTo(doublePath)).toEqual([]);
    expect((await allCalls()).length).toBe(before);
  });
});

describe('a retry of a DELETE whose outcome was lost (POST /api/workflows/{id}/retry)', () => {
  const retry = (id: string) => api(`/api/workflows/${id}/retry`, { method: 'POST' });

  /** The retried run's end: the projection shows attempt 2 once the retry has started. */
  const retriedRun = (id: string) =>
    waitFor(`run ${id} to end its retry`, async () => {
      const res = await api(`/api/workflows/${id}`);
      return res.body?.attempt === 2 && res.body.is_terminal ? res.body : undefined;
    }, 45_000, 150);

  it('every attempt timed out (the first one deleted it): FAILED timeout, and the retry answered 404 completes already_absent', async () => {
    // lost4-…: the first DELETE deletes it, and no answer comes back to the 4 calls of the first execution.
    const { input, doublePath } = deleteInput('lost4', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    const failed = await waitForTerminal(id);
    expect(failed).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(failed.state_data).toMatchObject({ failure_type: 'timeout' });
    expect(await callsTo(doublePath)).toHaveLength(4);

    expect((await retry(id)).status).toBe(200);
    const run = await retriedRun(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toMatchObject({ status_code: 404, already_absent: true, response: NOT_FOUND });
    expect(run.state_data).not.toHaveProperty('failure_type');
    expect(await callsTo(doublePath)).toHaveLength(5);
  });

  it('cancelled while its DELETE was in flight: the retry answered 404 completes already_absent', async () => {
    const { input, doublePath } = deleteInput('lost1', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    await waitFor('the provider call', async () => (await callsTo(doublePath)).length > 0 || undefined);
    expect((await api(`/api/workflows/${id}/cancel`, { method: 'POST' })).status).toBe(202);
    const cancelled = await waitForTerminal(id);
    expect(cancelled).toMatchObject({ status: 'CANCELLED' });
    expect(await callsTo(doublePath)).toHaveLength(1);

    expect((await retry(id)).status).toBe(200);
    const run = await retriedRun(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toMatchObject({ status_code: 404, already_absent: true });
    expect(await callsTo(doublePath)).toHaveLength(2);
  });

  it('every earlier attempt answered (404): the retry answered 404 still fails not_found', async () => {
    const { input, doublePath } = deleteInput('missing', ESIGN_VALID_TOKEN);
    const id = await start(DELETE_TYPE, input);
    expect((await waitForTerminal(id)).state_data).toMatchObject({ failure_type: 'not_found' });

    expect((await retry(id)).status).toBe(200);
    const run = await retriedRun(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({ failure_type: 'not_found', status_code: 404 });
    expect(run.state_data).not.toHaveProperty('already_absent');
    expect(await callsTo(doublePath)).toHaveLength(2);
  });
});

describe('esign.resources.get-resource-information', () => {
  const newResourceCalls = async (before: number) =>
    strip((await allCalls()).slice(before)).filter((c) => c.path === '/api/v2.1');

  it('without api_token: completes with the resource list, and the GET carries no Authorization header', async () => {
    const before = (await allCalls()).length;
    const id = await start(RESOURCES_TYPE, { base_url: stackEnv.esignUrl });
    const run = await waitForTerminal(id);
    expect(run).toMatchObject({ workflow_type: RESOURCES_TYPE, status: 'COMPLETED', state_name: 'COMPLETED' });
    expect(run.state_data).toEqual({ base_url: stackEnv.esignUrl, status_code: 200, response: RESOURCES });
    expect(await newResourceCalls(before)).toEqual([{ method: 'GET', path: '/api/v2.1', authorization: null }]);
  });

  it('with api_token: the bearer header is sent and the token is redacted in the output', async () => {
    const before = (await allCalls()).length;
    const id = await start(RESOURCES_TYPE, { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN });
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).toEqual({ base_url: stackEnv.esignUrl, api_token: '[redacted]', status_code: 200, response: RESOURCES });
    expect(await newResourceCalls(before)).toEqual([
      { method: 'GET', path: '/api/v2.1', authorization: `Bearer ${ESIGN_VALID_TOKEN}` },
    ]);
  });
});

describe('the stream of a failed run', () => {
  it('ends with event: failed whose data.error carries the message and the failure fields', async () => {
    const { input } = deleteInput('ok', WRONG_TOKEN);
    const id = await start(DELETE_TYPE, input);
    // Read live from the start, while the run executes; the server closes after the end event.
    const text = await rawStream(id);
    // "event:failed" and "event: failed" are the same field (the space after the colon is optional in SSE).
    const eventNames = [...text.matchAll(/^event: ?(.*)$/gm)].map((m) => m[1]);
    expect(eventNames).toEqual(['transition', 'failed']);
    expect(text.trimEnd().split('\n\n').pop()).toMatch(/^event: ?failed\nid: ?1\ndata: ?\{/);

    const { status, events, contentType } = await readStream(id);
    expect(status).toBe(200);
    expect(contentType).toEqual(expect.stringContaining('text/event-stream'));
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ['transition', '1'],
      ['failed', '1'],
    ]);
    expect(events[0].data).toMatchObject({ seq: 1, from: 'PENDING', to: 'FAILED', action: 'fail' });
    const end = events[1].data;
    expect(end.workflow_id).toBe(id);
    expect(end.state_name).toBe('FAILED');
    const run = (await api(`/api/workflows/${id}`)).body;
    const sd = run.state_data;
    expect(end.error).toEqual({
      message: sd.failure_reason,
      failure_reason: sd.failure_reason,
      failure_type: 'unauthorized',
      failed_step: 'execute',
      failed_layer: 'activity',
      failed_at_state: 'pending',
      error: sd.error,
      error_type: 'unauthorized',
      failed_at: sd.failed_at,
    });
    expect(end.error.message).toEqual(expect.stringContaining(AUTH_FAILED.errorCode));
    expect(end.error.message).toEqual(expect.stringContaining(AUTH_FAILED.message));
    expectIsoTimestamp(end.error.failed_at);
  });
});

describe('no secret anywhere', () => {
  it('the api_token values never appear in run, history, list or stream bodies, nor in the service log; nor do org tokens', async () => {
    const secrets = { ESIGN_VALID_TOKEN, WRONG_TOKEN };
    // Both tokens were really used by the runs above (the double saw them), so the checks below are not vacuous.
    const seen = (await allCalls()).map((c) => c.authorization);
    expect(seen).toContain(`Bearer ${ESIGN_VALID_TOKEN}`);
    expect(seen).toContain(`Bearer ${WRONG_TOKEN}`);
    expect(started.length).toBeGreaterThanOrEqual(10);

    const bodies: Array<[string, string]> = [];
    for (const id of started) {
      bodies.push([`GET run ${id}`, JSON.stringify((await api(`/api/workflows/${id}`)).body)]);
      bodies.push([`GET history ${id}`, JSON.stringify((await api(`/api/workflows/${id}/history`)).body)]);
      bodies.push([`stream ${id}`, await rawStream(id)]);
    }
    for (const type of [DELETE_TYPE, RESOURCES_TYPE]) {
      const list = await api(`/api/workflows?workflow_type=${encodeURIComponent(type)}&limit=100`);
      expect(list.status).toBe(200);
      bodies.push([`list ${type}`, JSON.stringify(list.body)]);
    }
    for (const text of streamTexts) bodies.push(['stream', text]);
    const listed = bodies.filter(([what]) => what.startsWith('list ')).map(([, b]) => b).join('\n');
    for (const id of started) expect(listed).toContain(id);

    expect(secretLeaks(secrets, bodies)).toEqual([]);

    // Let the service processes flush their last log lines.
    await new Promise((r) => setTimeout(r, 1_000));
    const log = fs.readFileSync(stackEnv.logFile, 'utf8');
    // The log is about these runs (so the check reads the right file): the worker's lines about the failing
    // ones name them (request lines name the route, never the run's id).
    expect(started.some((id) => log.includes(id))).toBe(true);
    expect(secretLeaks({ ...secrets, tokenA: stackEnv.tokenA, tokenB: stackEnv.tokenB }, [['the service log', log]])).toEqual([]);

    // Every log line about one of these runs names its organization.
    const aboutRuns = log
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => started.includes(String(e.workflowId ?? e.workflow_id)));
    expect(aboutRuns.length).toBeGreaterThan(started.length);
    expect(aboutRuns.filter((e) => typeof e.organization_uuid !== 'string' || !String(e.organization_uuid).startsWith('org_'))).toEqual([]);
  });
});

describe('bad input is a 422 naming fields, and starts nothing', () => {
  let token: string;

  beforeAll(() => {
    // A fresh organization, so its run lists are exactly what this block started.
    token = freshOrgToken('esign-validation');
  });

  async function runCount(type: string): Promise<number> {
    const res = await api(`/api/workflows?workflow_type=${encodeURIComponent(type)}&limit=100`, { token });
    expect(res.status).toBe(200);
    return res.body.runs.length;
  }

  async function rejected(type: string, initialData: Record<string, unknown>) {
    const before = await runCount(type);
    const res = await api('/api/workflows/start', { token, body: { workflow_type: type, initial_data: initialData } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(await runCount(type)).toBe(before);
    return res.body.error.details as Array<{ field: string; rule: string; message: string }>;
  }

  const valid = () => ({
    base_url: stackEnv.esignUrl,
    api_token: WRONG_TOKEN,
    accountid: '123456',
    userid: 'user-1',
    authorizationid: 'ok-1',
  });

  it.each(['accountid', 'userid', 'authorizationid'])('a missing %s is named with rule required', async (field) => {
    const input: Record<string, unknown> = valid();
    delete input[field];
    const details = await rejected(DELETE_TYPE, input);
    expect(details).toEqual([{ field: `initial_data.${field}`, rule: 'required', message: 'is required' }]);
  });

  it('all three missing at once: every one is named', async () => {
    const details = await rejected(DELETE_TYPE, { base_url: stackEnv.esignUrl });
    expect(details.map((d) => [d.field, d.rule]).sort()).toEqual([
      ['initial_data.accountid', 'required'],
      ['initial_data.authorizationid', 'required'],
      ['initial_data.userid', 'required'],
    ]);
    // A missing base_url is required too, although its schema words its own format error.
    const resources = await rejected(RESOURCES_TYPE, {});
    expect(resources.map((d) => [d.field, d.rule])).toEqual([['initial_data.base_url', 'required']]);
  });

  it('a base_url that is not an API root (…/api) is rejected', async () => {
    for (const base_url of ['https://esign.example.com/restapi', 'https://esign.example.com/', 'https://esign.example.com/api/v2.1']) {
      const details = await rejected(DELETE_TYPE, { ...valid(), base_url });
      expect(details).toHaveLength(1);
      expect(details[0]).toMatchObject({ field: 'initial_data.base_url', message: expect.stringContaining('must be an API root of the form https://<host>/api') });
      expect(details[0].rule).not.toBe('required');
    }
  });

  it('plain http to a host not in ALLOW_HTTP_HOSTS is outbound_policy; https to any host is valid', async () => {
    const inputs: Array<[string, Record<string, unknown>]> = [
      [DELETE_TYPE, { ...valid(), base_url: 'http://example.com/api' }],
      [RESOURCES_TYPE, { base_url: 'http://example.com/api' }],
    ];
    for (const [type, input] of inputs) {
      const details = await rejected(type, input);
      expect(details).toEqual([
        {
          field: 'initial_data.base_url',
          rule: 'outbound_policy',
          message: 'must use https (plain http only for hosts in ALLOW_HTTP_HOSTS)',
        },
      ]);
    }

    // https on a host not in the allowlist passes validation and starts a run (the list grows by one).
    // No token for that origin, so the run fails with missing_credentials before any outbound call.
    const before = await runCount(DELETE_TYPE);
    const res = await api('/api/workflows/start', {
      token,
      body: {
        workflow_type: DELETE_TYPE,
        initial_data: { base_url: 'https://esign.invalid/api', accountid: '42', userid: 'u', authorizationid: 'a' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ workflow_id: expect.stringMatching(/^wf_/), state_name: 'PENDING', is_terminal: false });
    expect(await runCount(DELETE_TYPE)).toBe(before + 1);
    const run = await waitForTerminal(res.body.workflow_id, token);
    expect(run.state_data).toMatchObject({ base_url: 'https://esign.invalid/api', failure_type: 'missing_credentials' });
  });

  it('an unknown extra field is unknown_field', async () => {
    const details = await rejected(DELETE_TYPE, { ...valid(), shoe_size: 44 });
    expect(details).toEqual([{ field: 'initial_data.shoe_size', rule: 'unknown_field', message: 'is not a field of this schema' }]);
    const resources = await rejected(RESOURCES_TYPE, { base_url: stackEnv.esignUrl, accountid: '1' });
    expect(resources).toEqual([{ field: 'initial_data.accountid', rule: 'unknown_field', message: 'is not a field of this schema' }]);
  });
});
