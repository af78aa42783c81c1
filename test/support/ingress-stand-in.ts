import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HookStore, TEST_EVENT_MARK_HEADER } from '../../activities/hooks/store';
import { keptHeaders } from '../../src/hooks/kept-headers';

/**
 * What POST /api/hooks/r/{endpoint_uuid} does, without the API around it: stores the body with the
 * headers the ingress keeps and answers 202 {event_uuid}. For tests running workflow code
 * in-process, where hook.receive-webhook needs an ingress to post to. `requests` lists
 * `METHOD path` of every request received, `testEvents` the events posted with a valid test event mark.
 */
export async function startIngressStandIn(store: HookStore) {
  const requests: string[] = [];
  const testEvents: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const match = /^\/api\/hooks\/r\/([^/]+)$/.exec(req.url ?? '');
      const endpoint = match ? await store.activeEndpoint(match[1]) : undefined;
      if (!endpoint) return void res.writeHead(404).end();
      const body = Buffer.concat(chunks);
      const event = await store.insertEvent(endpoint, body.toString('utf8'), keptHeaders(req.headers));
      const mark = req.headers[TEST_EVENT_MARK_HEADER];
      if (typeof mark === 'string' && store.isTestEventMark(endpoint.endpointUuid, body, mark)) testEvents.push(event.eventUuid);
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ event_uuid: event.eventUuid }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    testEvents,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
