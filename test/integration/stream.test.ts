import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DBHOST_VALID_TOKEN } from '../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { TEST_PROVIDER_HOST } from '../support/outbound';
import { waitFor } from '../support/ports';

jest.setTimeout(45_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const DELETE_PATH = /^\/api\/v2\.1\/accounts\/[^/]+\/users\/[^/]+\/authorization\/[^/]+$/;

/**
 * A loopback e-signature provider that holds each DELETE until the test
 * releases it (or `holdMs` passes), then answers 204 like the real one. The
 * shared double's slow-… (204 after 3 s) cannot serve here: the stack's
 * PROVIDER_TIMEOUT_MS is 1500, so every slow-… attempt times out and the run
 * FAILS after four attempts. `holdMs` stays under that timeout.
 */
async function startGatedProvider(holdMs = 1_200) {
  const calls: Array<{ method: string; path: string }> = [];
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    calls.push({ method: req.method ?? '', path });
    if (req.method !== 'DELETE' || !DELETE_PATH.test(path) || req.headers.authorization !== `Bearer ${ESIGN_VALID_TOKEN}`) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errorCode: 'RESOURCE_NOT_FOUND', message: 'nope' }));
      return;
    }
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      res.writeHead(204).end();
    };
    waiting.push(answer);
    setTimeout(answer, holdMs);
  });
  await new Promise<void>((r) => server.listen(0, TEST_PROVIDER_HOST, r));
  return {
    url: `http://${TEST_PROVIDER_HOST}:${(server.address() as AddressInfo).port}/api`,
    calls,
    release: () => waiting.splice(0).forEach((answer) => answer()),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const deleteInput = (baseUrl: string, behaviour: string) => ({
  base_url: baseUrl,
  api_token: ESIGN_VALID_TOKEN,
  accountid: '4711',
  userid: uniqueId('user'),
  authorizationid: uniqueId(behaviour),
});

const historyOf = async (id: string) => (await api(`/api/workflows/${id}/history`)).body.transitions as any[];
const asEvent = (t: any) => ({ event: 'transition', id: String(t.seq), data: { seq: t.seq, from: t.from, to: t.to, action: t.action, at: t.at } });

describe('GET /api/workflows/{id}/stream', () => {
  let provider: Awaited<ReturnType<typeof startGatedProvider>>;
  beforeAll(async () => {
    provider = await startGatedProvider();
  });
  afterAll(async () => {
    await provider.close();
  });

  it('delivers transitions live, then completed with state_data, then the server closes', async () => {
    const input = deleteInput(provider.url, 'live');
    const id = await startRun(DELETE, input);
    await waitFor('the provider call', async () => provider.calls.some((c) => c.path.endsWith(input.authorizationid)) || undefined, 10_000, 20);
    expect((await api(`/api/workflows/${id}`)).body.state_name).toBe('PENDING');

    const openedAt = Date.now();
    const streaming = readStream(id, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300)); // let the stream connect while the call is held
    expect((await api(`/api/workflows/${id}`)).body.state_name).toBe('PENDING');
    provider.release();
    const stream = await streaming;
    const endedAt = Date.now();

    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const run = await api(`/api/workflows/${id}`);
    const history = await historyOf(id);
    expect(history).toHaveLength(1);
    expect(stream.events).toEqual([
      { event: 'transition', id: '1', data: { seq: 1, from: 'PENDING', to: 'COMPLETED', action: 'execute', at: history[0].at } },
      { event: 'completed', id: '1', data: { workflow_id: id, state_name: 'COMPLETED', state_data: run.body.state_data } },
    ]);
    expect(run.body.state_data).toEqual({ ...input, api_token: '[redacted]', status_code: 204, response: null });
    // The transition happened after the stream was opened: it was pushed live, not replayed.
    expect(Date.parse(history[0].at)).toBeGreaterThanOrEqual(openedAt);
    // Pushed on the transition's notification, not found by the streams' 5 s re-read, and
    // the server ended the response itself (the reader's own timeout is 20 s).
    expect(endedAt - Date.parse(history[0].at)).toBeLessThan(2_000);
    expect(endedAt - openedAt).toBeLessThan(3_000);
  });

  it('a client that reconnects with Last-Event-ID gets no gap and no duplicate', async () => {
    // once401-…: fails (seq 1), is retried and completes (seq 2): a two-transition history.
    const id = await startRun(DELETE, deleteInput(stackEnv.esignUrl, 'once401'));
    expect((await waitForTerminal(id)).status).toBe('FAILED');
    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).status).toBe(200);
    expect((await waitForTerminal(id)).status).toBe('COMPLETED');
    const history = await historyOf(id);
    expect(history.map((t) => t.seq)).toEqual([1, 2]);
    const completed = {
      event: 'completed',
      id: '2',
      data: { workflow_id: id, state_name: 'COMPLETED', state_data: (await api(`/api/workflows/${id}`)).body.state_data },
    };

    const full = await readStream(id, { timeoutMs: 10_000 });
    expect(full.events).toEqual([asEvent(history[0]), asEvent(history[1]), completed]);

    // The client drops after the first event and comes back with its id.
    const firstLeg = await readStream(id, { stopAfter: 1, timeoutMs: 10_000 });
    expect(firstLeg.events).toEqual([asEvent(history[0])]);
    const secondLeg = await readStream(id, { lastEventId: firstLeg.events[0].id, timeoutMs: 10_000 });
    expect(secondLeg.status).toBe(200);
    expect(secondLeg.events).toEqual([asEvent(history[1]), completed]);
    const seqs = [...firstLeg.events, ...secondLeg.events].filter((e) => e.event === 'transition').map((e) => e.data.seq);
    expect(seqs).toEqual([1, 2]);

    // Reconnecting after the last transition replays only the end.
    const atEnd = await readStream(id, { lastEventId: '2', timeoutMs: 10_000 });
    expect(atEnd.events).toEqual([completed]);
  });

  it('Last-Event-ID 1 on a finished one-transition run: only completed', async () => {
    const id = await startRun(DELETE, deleteInput(stackEnv.esignUrl, 'ok'));
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    const stream = await readStream(id, { lastEventId: '1', timeoutMs: 10_000 });
    expect(stream.status).toBe(200);
    expect(stream.events).toEqual([
      { event: 'completed', id: '1', data: { workflow_id: id, state_name: 'COMPLETED', state_data: run.state_data } },
    ]);
  });

  it('sends keep-alive comments while a run is idle', async () => {
    // hang-…: the provider never answers; each attempt times out after 1.5 s, so the run stays PENDING for ~10 s.
    const id = await startRun(DELETE, deleteInput(stackEnv.esignUrl, 'hang'));
    const stream = await readStream(id, { timeoutMs: 3_500 });
    expect(stream.status).toBe(200);
    expect(stream.events).toEqual([]);
    expect(stream.comments).toBeGreaterThanOrEqual(2); // SSE_KEEPALIVE_MS=1000
    expect((await api(`/api/workflows/${id}`)).body.state_name).toBe('PENDING');
  });

  it('a failed run ends with failed carrying error.message and the failure fields', async () => {
    const id = await startRun(DELETE, deleteInput(stackEnv.esignUrl, 'missing'));
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    const history = await historyOf(id);
    const stream = await readStream(id, { timeoutMs: 10_000 });
    expect(stream.status).toBe(200);
    expect(stream.events).toHaveLength(2);
    expect(stream.events[0]).toEqual(asEvent(history[0]));
    expect(stream.events[0].data).toMatchObject({ seq: 1, from: 'PENDING', to: 'FAILED', action: 'fail' });
    const sd = run.state_data;
    expect(stream.events[1]).toEqual({
      event: 'failed',
      id: '1',
      data: {
        workflow_id: id,
        state_name: 'FAILED',
        state_data: sd,
        error: {
          message: sd.failure_reason,
          failure_reason: sd.failure_reason,
          failure_type: 'not_found',
          failed_step: 'execute',
          failed_layer: 'activity',
          failed_at_state: sd.failed_at_state,
          error: sd.error,
          error_type: 'not_found',
          failed_at: sd.failed_at,
        },
      },
    });
    expect(stream.events[1].data.error.message).toBe(
      'e-signature API answered HTTP 404: RESOURCE_NOT_FOUND: The URL provided does not resolve to a resource.',
    );
  });

  it('streams of one run, joining at different moments and positions, each get every event once, in order', async () => {
    const connection = await api('/api/connections', {
      body: { plugin: 'dbhost', name: uniqueId('dbhost-fanout'), secrets: { api_token: DBHOST_VALID_TOKEN }, config: { api_url: process.env.TEST_DBHOST_URL } },
    });
    expect(connection.status).toBe(201);
    // finishes-3 with poll_interval 1: five transitions over ~3 s (start, three polls, finish).
    const id = await startRun('dbhost.operations.wait', {
      connection_uuid: connection.body.connection_uuid,
      dbhost_project_id: uniqueId('fanout'),
      dbhost_operation_id: uniqueId('finishes-3'),
      timeout_seconds: 30,
      poll_interval: 1,
    });
    const early = [readStream(id, { timeoutMs: 20_000 }), readStream(id, { timeoutMs: 20_000 })];
    await waitFor('the second transition', async () => (await historyOf(id)).length >= 2 || undefined, 10_000, 50);
    // These join streams that are already further on: one from the start, one after seq 1.
    const late = [readStream(id, { timeoutMs: 20_000 }), readStream(id, { lastEventId: '1', timeoutMs: 20_000 })];
    // The run's shared reader serves org A's streams only.
    expect((await readStream(id, { token: stackEnv.tokenB, timeoutMs: 5_000 })).status).toBe(404);
    const [first, second, fromStart, afterOne] = await Promise.all([...early, ...late]);

    const run = await api(`/api/workflows/${id}`);
    expect(run.body.status).toBe('COMPLETED');
    const history = await historyOf(id);
    expect(history.map((t) => t.seq)).toEqual([1, 2, 3, 4, 5]);
    const completed = { event: 'completed', id: '5', data: { workflow_id: id, state_name: 'COMPLETED', state_data: run.body.state_data } };
    const all = [...history.map(asEvent), completed];
    expect(first.events).toEqual(all);
    expect(second.events).toEqual(all);
    expect(fromStart.events).toEqual(all);
    expect(afterOne.events).toEqual(all.slice(1));
  });

  it('an unknown id is a 404 JSON error, before any SSE', async () => {
    const unknown = `wf_${uniqueId('missing').replace(/-/g, '')}`;
    const stream = await readStream(unknown, { timeoutMs: 5_000 });
    expect(stream.status).toBe(404);
    expect(stream.contentType).toMatch(/^application\/json/);
    expect(stream.events).toEqual([]);
    const res = await api(`/api/workflows/${unknown}/stream`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: `run ${unknown} not found`, details: null } });
  });

  it('HEAD on a RUNNING run answers the headers of the stream and ends the response', async () => {
    // Held past the provider time-out: its attempts are retried, the run stays RUNNING for seconds.
    const holding = await startGatedProvider(60_000);
    const input = deleteInput(holding.url, 'head');
    const id = await startRun(DELETE, input);
    await waitFor('the provider call', async () => holding.calls.some((c) => c.path.endsWith(input.authorizationid)) || undefined, 10_000, 20);
    // One connection: the request after the HEAD is answered only once the HEAD's response has ended.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const request = (method: string, path: string) =>
      new Promise<{ status?: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const req = http.request(`${stackEnv.apiUrl}${path}`, { method, agent, headers: { authorization: `Bearer ${stackEnv.tokenA}` }, timeout: 5_000 }, (res) => {
          res.resume().on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
        });
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 5 s`)));
        req.on('error', reject);
        req.end();
      });
    try {
      const head = await request('HEAD', `/api/workflows/${id}/stream`);
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
      expect((await request('GET', `/api/workflows/${id}`)).status).toBe(200);
      expect((await request('HEAD', `/api/workflows/wf_${uniqueId('missing').replace(/-/g, '')}/stream`)).status).toBe(404);
    } finally {
      agent.destroy();
      await api(`/api/workflows/${id}/cancel`, { method: 'POST' });
      await holding.close();
    }
    expect((await waitForTerminal(id)).status).toBe('CANCELLED');
  });
});
