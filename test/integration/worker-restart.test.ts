import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, control, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { TEST_PROVIDER_HOST } from '../support/outbound';
import { waitFor } from '../support/ports';
import { esignActivityOptions } from '../../workflows/esign/api-root';

/**
 * A provider call killed with its worker is only retried once Temporal gives up on
 * the attempt: the e-signature activity has no heartbeat, so that is its
 * startToCloseTimeout (60 s today). The test has to wait that long.
 */
const ACTIVITY_TIMEOUT_MS = Number.parseInt(esignActivityOptions.startToCloseTimeout, 10) * 1000;
jest.setTimeout(ACTIVITY_TIMEOUT_MS + 60_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const RESOURCES = 'esign.resources.get-resource-information';
const DELETE_PATH = /^\/api\/v2\.1\/accounts\/[^/]+\/users\/[^/]+\/authorization\/[^/]+$/;
const RESOURCE_LIST = { resources: [{ name: 'accounts', value: '/v2.1/accounts' }] };
/** Under the stack's PROVIDER_TIMEOUT_MS (1500), so a held call is in flight, not timed out. */
const HOLD_MS = 1_200;

interface ProviderCall {
  method: string;
  path: string;
  at: number;
  /** The caller went away before the answer: the call was in flight when its worker died. */
  cutOff: boolean;
  answered: boolean;
}

/**
 * A loopback e-signature provider: the first call on each path is held for
 * HOLD_MS (a provider call in flight), later ones answer at once. The shared
 * double's slow-… cannot serve: it answers after 3 s, past the stack's 1.5 s
 * provider timeout, so its runs always end FAILED.
 */
async function startHoldingProvider() {
  const calls: ProviderCall[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const call: ProviderCall = { method: req.method ?? '', path, at: Date.now(), cutOff: false, answered: false };
    const first = !calls.some((c) => c.path === path);
    calls.push(call);
    const answer = () => {
      if (call.answered || call.cutOff) return;
      call.answered = true;
      if (req.method === 'DELETE' && DELETE_PATH.test(path) && req.headers.authorization === `Bearer ${ESIGN_VALID_TOKEN}`) {
        res.writeHead(204).end();
      } else if (req.method === 'GET' && path === '/api/v2.1') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(RESOURCE_LIST));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errorCode: 'RESOURCE_NOT_FOUND', message: 'nope' }));
      }
    };
    res.on('close', () => {
      if (!call.answered) call.cutOff = true;
    });
    if (first) setTimeout(answer, HOLD_MS);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, TEST_PROVIDER_HOST, r));
  return {
    url: `http://${TEST_PROVIDER_HOST}:${(server.address() as AddressInfo).port}/api`,
    calls,
    callsTo: (fragment: string) => calls.filter((c) => c.path.includes(fragment)),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a worker killed mid-run', () => {
  let provider: Awaited<ReturnType<typeof startHoldingProvider>>;
  let down = false;

  beforeAll(async () => {
    provider = await startHoldingProvider();
  });
  afterAll(async () => {
    // Whatever happened, leave the stack running for the suites after this one.
    if (down) await control('start');
    await provider?.close();
  });

  it('loses nothing: every run completes, with contiguous history and bounded provider calls', async () => {
    const deletes = [0, 1].map(() => ({
      base_url: provider.url,
      api_token: ESIGN_VALID_TOKEN,
      accountid: '4711',
      userid: uniqueId('user'),
      authorizationid: uniqueId('restart'),
    }));
    const resourcesPath = '/api/v2.1';
    const runs = await Promise.all([
      ...deletes.map(async (input) => ({ id: await startRun(DELETE, input), fragment: input.authorizationid, input })),
      (async () => ({ id: await startRun(RESOURCES, { base_url: provider.url }), fragment: resourcesPath, input: { base_url: provider.url } }))(),
    ]);
    const callsOf = (fragment: string) =>
      fragment === resourcesPath ? provider.calls.filter((c) => c.path === resourcesPath) : provider.callsTo(fragment);

    // Every run's provider call is in flight: kill the worker now.
    await waitFor('every provider call to arrive', async () => runs.every((r) => callsOf(r.fragment).length === 1) || undefined, 15_000, 10);
    await control('kill');
    down = true;
    await waitFor('the held calls to be cut off', async () => provider.calls.every((c) => c.cutOff) || undefined, 5_000, 20);
    expect(provider.calls.map((c) => [c.cutOff, c.answered])).toEqual(runs.map(() => [true, false]));

    await control('start'); // in PGlite mode this restarts the API too, and waits for its health
    down = false;
    for (const run of runs) {
      // Nothing lost, nothing failed: the run is where it was.
      const res = await api(`/api/workflows/${run.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ state_name: 'PENDING', status: 'RUNNING', is_terminal: false, attempt: 1 });
    }

    for (const run of runs) {
      const ended = await waitForTerminal(run.id, stackEnv.tokenA, ACTIVITY_TIMEOUT_MS + 30_000);
      expect(ended).toMatchObject({ workflow_id: run.id, status: 'COMPLETED', state_name: 'COMPLETED', attempt: 1 });
      const response = run.fragment === resourcesPath ? { status_code: 200, response: RESOURCE_LIST } : { status_code: 204, response: null };
      expect(ended.state_data).toEqual({ ...run.input, ...('api_token' in run.input ? { api_token: '[redacted]' } : {}), ...response });

      const history = (await api(`/api/workflows/${run.id}/history`)).body.transitions as any[];
      const seqs = history.map((t) => t.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1)); // contiguous from 1, hence no duplicate
      expect(history.map((t) => [t.seq, t.from, t.to, t.action, t.attempt])).toEqual([[1, 'PENDING', 'COMPLETED', 'execute', 1]]);
      expect(history[0].data).toEqual(response);

      const stream = await readStream(run.id, { timeoutMs: 10_000 });
      expect(stream.events.map((e) => [e.event, e.id])).toEqual([
        ['transition', '1'],
        ['completed', '1'],
      ]);

      // Bound: at most 2 calls per run. The attempt killed in flight made one; Temporal
      // retries it once the attempt's start-to-close timeout expires (no heartbeat tells it
      // sooner), and that retry is answered at once, within the provider timeout, so
      // there is no third. At least 2, since the first was cut off before any answer.
      const calls = callsOf(run.fragment);
      expect(calls.length).toBeLessThanOrEqual(2);
      expect(calls.map((c) => [c.method, c.cutOff, c.answered])).toEqual([
        [run.fragment === resourcesPath ? 'GET' : 'DELETE', true, false],
        [run.fragment === resourcesPath ? 'GET' : 'DELETE', false, true],
      ]);
    }
    expect(provider.calls).toHaveLength(2 * runs.length);
  });
});
