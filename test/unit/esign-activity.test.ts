import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { createEsignActivities, type EsignConfig, type EsignRequest } from '../../activities/esign';
import { ESIGN_VALID_TOKEN, startEsignDouble } from '../doubles/esign-double';
import { dispatcherFor } from '../support/outbound';
import { providerOutcomeUnknown } from '../../workflows/runtime/provider-outcome';

/**
 * The e-signature activity called directly (no Temporal) against the loopback
 * double: token fallback, the failure kinds Temporal's retry policy relies on
 * (nonRetryable or not, type, details), and the outbound https policy.
 */

type Call = { method: string; path: string; authorization: string | null };

let double: Awaited<ReturnType<typeof startEsignDouble>>;

beforeAll(async () => {
  double = await startEsignDouble();
});

afterAll(async () => {
  await double.close();
});

const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

async function calls(): Promise<Call[]> {
  const res = await fetch(`${new URL(double.url).origin}/__calls`);
  return (await res.json()) as Call[];
}

async function callsTo(path: string): Promise<Call[]> {
  return (await calls()).filter((c) => c.path === path).map(({ method, path: p, authorization }) => ({ method, path: p, authorization }));
}

function config(overrides: Partial<EsignConfig> = {}): EsignConfig {
  return { allowHttpHosts: ['127.0.0.1'], timeoutMs: 1_000, dispatcher: dispatcherFor([double.url]), ...overrides };
}

/** A delete request for a fresh authorization id; `path` is what the double sees. */
function deleteRequest(behaviour: string, apiToken?: string, baseUrl = double.url) {
  const accountid = String(100000 + Math.floor(Math.random() * 899999));
  const userid = unique('user');
  const authorizationid = unique(behaviour);
  const relative = `/v2.1/accounts/${accountid}/users/${userid}/authorization/${authorizationid}`;
  const req: EsignRequest = { organization_uuid: 'org_unit', base_url: baseUrl, method: 'DELETE', path: relative, token_required: true };
  if (apiToken !== undefined) req.api_token = apiToken;
  return { req, path: `/api${relative}` };
}

/** Runs the promise and returns what it rejected with; fails the test if it resolved. */
async function rejection(promise: Promise<unknown>): Promise<ApplicationFailure> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(outcome)}`);
}

describe('esignRequest: the api_token and ESIGN_API_TOKEN', () => {
  it('uses defaultApiToken (ESIGN_API_TOKEN) when the request brings no api_token and calls the origin of defaultApiBaseUrl', async () => {
    const { req, path } = deleteRequest('ok');
    const result = await createEsignActivities(config({ defaultApiToken: ESIGN_VALID_TOKEN, defaultApiBaseUrl: double.url })).esignRequest(req);
    expect(result).toEqual({ status_code: 204, response: null });
    expect(await callsTo(path)).toEqual([{ method: 'DELETE', path, authorization: `Bearer ${ESIGN_VALID_TOKEN}` }]);
  });

  it('an explicit api_token wins over defaultApiToken', async () => {
    const { req, path } = deleteRequest('ok', ESIGN_VALID_TOKEN);
    const result = await createEsignActivities(config({ defaultApiToken: 'fallback-token-never-sent', defaultApiBaseUrl: double.url })).esignRequest(req);
    expect(result).toEqual({ status_code: 204, response: null });
    expect(await callsTo(path)).toEqual([{ method: 'DELETE', path, authorization: `Bearer ${ESIGN_VALID_TOKEN}` }]);

    // And the other way round: a wrong explicit token is sent (and refused) even with a valid fallback.
    const wrong = deleteRequest('ok', 'explicit-wrong-token');
    const err = await rejection(createEsignActivities(config({ defaultApiToken: ESIGN_VALID_TOKEN, defaultApiBaseUrl: double.url })).esignRequest(wrong.req));
    expect(err.type).toBe('unauthorized');
    expect(await callsTo(wrong.path)).toEqual([{ method: 'DELETE', path: wrong.path, authorization: 'Bearer explicit-wrong-token' }]);
  });

  it.each([
    ['no ESIGN_API_TOKEN', {}],
    ['ESIGN_API_TOKEN for another origin', { defaultApiToken: ESIGN_VALID_TOKEN, defaultApiBaseUrl: 'https://esign.platform.example/api' }],
  ])('no api_token and %s: a non-retryable missing_credentials failure before any call', async (_, fallback) => {
    const { req, path } = deleteRequest('ok');
    const before = (await calls()).length;
    const err = await rejection(createEsignActivities(config(fallback)).esignRequest(req));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('missing_credentials');
    expect(err.message).toBe(
      'no e-signature API token may be sent to this base_url: pass api_token or connection_uuid (ESIGN_API_TOKEN goes only to the origin of ESIGN_API_BASE_URL)',
    );
    expect(await callsTo(path)).toEqual([]);
    expect((await calls()).length).toBe(before);
  });

  it('the resource listing needs no token and then sends no Authorization header', async () => {
    const before = (await calls()).length;
    const result = await createEsignActivities(config()).esignRequest({
      organization_uuid: 'org_unit',
      base_url: double.url,
      method: 'GET',
      path: '/v2.1',
      token_required: false,
    });
    expect(result.status_code).toBe(200);
    expect(result.response).toEqual({
      resources: [
        { name: 'accounts', value: '/v2.1/accounts' },
        { name: 'billing_plans', value: '/v2.1/billing_plans' },
        { name: 'current_user', value: '/v2.1/current_user' },
        { name: 'login_information', value: '/v2.1/login_information' },
      ],
    });
    const added = (await calls()).slice(before);
    expect(added.map(({ method, path, authorization }) => ({ method, path, authorization }))).toEqual([
      { method: 'GET', path: '/api/v2.1', authorization: null },
    ]);
  });
});

describe('esignRequest: failure kinds', () => {
  it('401 is non-retryable, typed unauthorized, and keeps status_code and response in details[0]', async () => {
    const { req } = deleteRequest('ok', 'a-wrong-token');
    const err = await rejection(createEsignActivities(config()).esignRequest(req));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('unauthorized');
    expect(err.details?.[0]).toEqual({
      status_code: 401,
      response: {
        errorCode: 'USER_AUTHENTICATION_FAILED',
        message: 'One or both of Username and Password are invalid. Invalid access token',
      },
    });
    expect(err.message).toBe(
      'e-signature API answered HTTP 401: USER_AUTHENTICATION_FAILED: One or both of Username and Password are invalid. Invalid access token',
    );
  });

  it('404 is non-retryable, typed not_found, with details[0] = {status_code, response}', async () => {
    const { req, path } = deleteRequest('missing', ESIGN_VALID_TOKEN);
    const err = await rejection(createEsignActivities(config()).esignRequest(req));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('not_found');
    expect(err.details).toEqual([
      { status_code: 404, response: { errorCode: 'RESOURCE_NOT_FOUND', message: 'The URL provided does not resolve to a resource.' } },
    ]);
    expect(await callsTo(path)).toHaveLength(1);
  });

  it('5xx is retryable (nonRetryable false) and keeps status_code and response', async () => {
    const activities = createEsignActivities(config());
    const down = deleteRequest('down', ESIGN_VALID_TOKEN);
    const err = await rejection(activities.esignRequest(down.req));
    expect(err.nonRetryable).toBe(false);
    expect(err.type).toBe('server_error');
    expect(err.details?.[0]).toEqual({
      status_code: 503,
      response: { errorCode: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable.' },
    });

    // 500 once then 204: the first attempt is a retryable failure, the second succeeds.
    const flaky = deleteRequest('flaky', ESIGN_VALID_TOKEN);
    const first = await rejection(activities.esignRequest(flaky.req));
    expect(first.nonRetryable).toBe(false);
    expect(first.type).toBe('server_error');
    expect(first.details?.[0]).toEqual({
      status_code: 500,
      response: { errorCode: 'INTERNAL_SERVER_ERROR', message: 'An unexpected error occurred.' },
    });
    expect(await activities.esignRequest(flaky.req)).toEqual({ status_code: 204, response: null });
    expect(await callsTo(flaky.path)).toHaveLength(2);
  });

  it('plain http to a host not in allowHttpHosts is a non-retryable https_required failure, and nothing is called', async () => {
    const { req, path } = deleteRequest('ok', ESIGN_VALID_TOKEN);
    const before = (await calls()).length;
    const err = await rejection(createEsignActivities(config({ allowHttpHosts: ['localhost'] })).esignRequest(req));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('https_required');
    expect(err.message).toBe('base_url must use https (plain http only for hosts in ALLOW_HTTP_HOSTS)');
    expect(await callsTo(path)).toEqual([]);
    expect((await calls()).length).toBe(before);

    // host:port entries are honoured too: the same call is allowed when the exact host:port is listed.
    const port = new URL(double.url).port;
    const allowed = deleteRequest('ok', ESIGN_VALID_TOKEN);
    const ok = await createEsignActivities(config({ allowHttpHosts: [`127.0.0.1:${port}`] })).esignRequest(allowed.req);
    expect(ok).toEqual({ status_code: 204, response: null });
  });

  it.each(['..', '.'])('a path whose id is the dot segment "%s" (a direct start past the schema) is refused for good, and nothing is called', async (dot) => {
    const { req } = deleteRequest('ok', ESIGN_VALID_TOKEN);
    const before = (await calls()).length;
    const err = await rejection(createEsignActivities(config()).esignRequest({ ...req, path: `/v2.1/accounts/4711/users/${dot}/authorization/${dot}` }));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('invalid_input');
    expect((await calls()).length).toBe(before);
  });

  it.each(['bad\ntoken', 'tok\u0100en'])('a token no HTTP header can carry (%j, a connection stored before tokens were checked) fails for good as invalid_input, not unreachable', async (token) => {
    const { req } = deleteRequest('ok', token);
    const before = (await calls()).length;
    const err = await rejection(createEsignActivities(config()).esignRequest(req));
    expect(err.nonRetryable).toBe(true);
    expect(err.type).toBe('invalid_input');
    expect(err.message).toBe('e-signature API not called: the API token holds a character no HTTP header may carry (a line break, or one above U+00FF); a token is visible ASCII');
    expect((await calls()).length).toBe(before);
  });

  it('a provider that does not answer in time is a retryable failure typed timeout', async () => {
    const { req, path } = deleteRequest('hang', ESIGN_VALID_TOKEN);
    const started = Date.now();
    const err = await rejection(createEsignActivities(config({ timeoutMs: 300 })).esignRequest(req));
    const elapsed = Date.now() - started;
    expect(err.nonRetryable).toBe(false);
    expect(err.type).toBe('timeout');
    expect(err.message).toBe('e-signature API did not answer within 300 ms');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3_000);
    expect(await callsTo(path)).toHaveLength(1);
  });
});

describe('esignRequest: a provider that cannot be reached says why', () => {
  /** An http URL on a loopback port nothing listens on (any more). */
  async function closedPortUrl(): Promise<string> {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    return `http://127.0.0.1:${port}/api`;
  }

  const request = (baseUrl: string, apiToken = ESIGN_VALID_TOKEN): EsignRequest => ({
    organization_uuid: 'org_unit',
    base_url: baseUrl,
    api_token: apiToken,
    method: 'DELETE',
    path: '/v2.1/accounts/4711/users/u/authorization/a',
    token_required: true,
  });

  it('connection refused: retryable unreachable, naming the cause rather than "fetch failed"', async () => {
    const url = await closedPortUrl();
    const err = await rejection(createEsignActivities(config({ dispatcher: dispatcherFor([url]) })).esignRequest(request(url)));
    expect(err).toMatchObject({ type: 'unreachable', nonRetryable: false });
    expect(err.message).toBe(`e-signature API unreachable: connect ECONNREFUSED ${new URL(url).host}`);
  });

  it('a name that does not resolve: the DNS failure is the reason', async () => {
    const url = 'http://esign.nowhere.example/api';
    const resolve = async (host: string) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    const activities = createEsignActivities(config({ allowHttpHosts: ['esign.nowhere.example'], dispatcher: dispatcherFor([url], resolve) }));
    const err = await rejection(activities.esignRequest(request(url)));
    expect(err).toMatchObject({ type: 'unreachable', nonRetryable: false, message: 'e-signature API unreachable: getaddrinfo ENOTFOUND esign.nowhere.example' });
  });

  it('a cause that quotes the token has it cut out', async () => {
    const url = 'http://esign.nowhere.example/api';
    const token = 'quoted-by-the-cause-4e1f9a';
    const resolve = async () => {
      throw new Error(`resolver refused a request carrying Bearer ${token}`);
    };
    const activities = createEsignActivities(config({ allowHttpHosts: ['esign.nowhere.example'], dispatcher: dispatcherFor([url], resolve) }));
    const err = await rejection(activities.esignRequest(request(url, token)));
    expect(err.message).toBe('e-signature API unreachable: resolver refused a request carrying Bearer [redacted]');
  });
});

describe('esignRequest: an outcome lost in an earlier run', () => {
  /** What the workflow reads of the activity's final failure. */
  const unknownToWorkflow = (err: ApplicationFailure) =>
    providerOutcomeUnknown(new ActivityFailure('activity failed', 'esignRequest', '1', RetryState.NON_RETRYABLE_FAILURE, 'identity', err));

  it('a call that got no answer says so in its failure; one that got an answer does not', async () => {
    const hang = await rejection(createEsignActivities(config({ timeoutMs: 300 })).esignRequest(deleteRequest('hang', ESIGN_VALID_TOKEN).req));
    expect(hang.type).toBe('timeout');
    expect(unknownToWorkflow(hang)).toBe(true);
    const missing = await rejection(createEsignActivities(config()).esignRequest(deleteRequest('missing', ESIGN_VALID_TOKEN).req));
    expect(missing.type).toBe('not_found');
    expect(unknownToWorkflow(missing)).toBe(false);
  });

  it('a DELETE re-sent by a retry of such a run, answered 404, completes already_absent; without the mark it fails not_found', async () => {
    const { req, path } = deleteRequest('missing', ESIGN_VALID_TOKEN);
    const result = await createEsignActivities(config()).esignRequest({ ...req, earlier_outcome_unknown: true });
    expect(result).toEqual({ status_code: 404, response: { errorCode: 'RESOURCE_NOT_FOUND', message: 'The URL provided does not resolve to a resource.' }, already_absent: true });
    const err = await rejection(createEsignActivities(config()).esignRequest(req));
    expect(err.type).toBe('not_found');
    expect(await callsTo(path)).toHaveLength(2);
  });

  it('a retried run failing again still says so: the next retry must know too', async () => {
    const { req } = deleteRequest('down', ESIGN_VALID_TOKEN);
    const err = await rejection(createEsignActivities(config()).esignRequest({ ...req, earlier_outcome_unknown: true }));
    expect(err.type).toBe('server_error');
    expect(unknownToWorkflow(err)).toBe(true);
  });
});
