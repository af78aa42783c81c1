import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RateLimitError, type RunEvent, WorkflowEngine } from '@workflow-engine/sdk';

const SSE =
  'event: transition\nid: 1\ndata: {"seq":1,"from":"A","to":"B","action":"go","at":"t"}\n\n' +
  'event: completed\ndata: {"state_name":"COMPLETED","state_data":{"x":1}}\n\n';

/** A loopback API whose stream answers 429 too_many_streams (with Retry-After) `refusals` times, then the run's events. */
async function streamApi(refusals: number, retryAfter: string) {
  const requests: number[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(Date.now());
    if (requests.length <= refusals) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ error: { code: 'too_many_streams', message: 'too many streams' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(SSE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(resolve).closeAllConnections()) };
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  for await (const e of events) all.push(e);
  return all;
}

describe('SDK event stream refused with 429 too_many_streams', () => {
  it('is reopened after Retry-After and delivers the run', async () => {
    const api = await streamApi(1, '1');
    try {
      const engine = new WorkflowEngine({ baseUrl: api.baseUrl, token: 't' });
      const events = await collect(engine.workflows.stream('wf_1'));
      expect(events.map((e) => e.type)).toEqual(['transition', 'completed']);
      expect(api.requests).toHaveLength(2);
      expect(api.requests[1]! - api.requests[0]!).toBeGreaterThanOrEqual(950);
    } finally {
      await api.close();
    }
  });

  it('throws the RateLimitError once maxRetries reopenings were refused too', async () => {
    const api = await streamApi(3, '0');
    try {
      const engine = new WorkflowEngine({ baseUrl: api.baseUrl, token: 't', maxRetries: 2 });
      const err = await collect(engine.workflows.stream('wf_1')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitError);
      expect(err).toMatchObject({ status: 429, code: 'too_many_streams' });
      expect(api.requests).toHaveLength(3);
    } finally {
      await api.close();
    }
  });
});

describe('SDK event stream cut by a proxy during a long wait', () => {
  /** A loopback API whose stream sends the first transition, then `cuts` connections that each carry only keep-alives, then the end. */
  async function cuttingApi(cuts: number, keepAlive: boolean) {
    let requests = 0;
    const server: Server = createServer((_req, res) => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (requests === 1) return res.end(SSE.split('event: completed')[0]);
      if (requests <= cuts + 1) return res.end(keepAlive ? ':\n\n' : '');
      res.end(SSE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { baseUrl: `http://127.0.0.1:${port}`, requests: () => requests, close: () => new Promise((resolve) => server.close(resolve).closeAllConnections()) };
  }

  it('reconnects past maxRetries as long as each connection showed keep-alives', async () => {
    const api = await cuttingApi(4, true);
    try {
      const engine = new WorkflowEngine({ baseUrl: api.baseUrl, token: 't', maxRetries: 0 });
      expect((await collect(engine.workflows.stream('wf_1'))).map((e) => e.type)).toEqual(['transition', 'completed']);
      expect(api.requests()).toBe(6);
    } finally {
      await api.close();
    }
  });

  it('gives up on connections that close before showing any life', async () => {
    const api = await cuttingApi(4, false);
    try {
      const engine = new WorkflowEngine({ baseUrl: api.baseUrl, token: 't', maxRetries: 0 });
      await expect(collect(engine.workflows.stream('wf_1'))).rejects.toThrow(/kept closing/);
    } finally {
      await api.close();
    }
  });
});
