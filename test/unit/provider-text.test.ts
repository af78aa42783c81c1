import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { callProvider } from '../../activities/provider-http';
import { dispatcherFor } from '../support/outbound';

/**
 * A provider's JSON may carry a lone surrogate as an escape ("\ud800"): valid JSON, but no
 * Postgres jsonb column stores it, and the run's projection used to retry that write forever.
 */
describe('text of a provider answer', () => {
  let server: http.Server;
  let base: string;
  // Raw JSON text, as the provider sends it: the escapes reach JSON.parse untouched.
  const answers: Record<string, [number, string]> = {
    '/ok': [200, '{"k\\ud800": ["a\\udc00b", "\\ud83d\\ude00"], "nested": [[{"deep": "\\udfff"}]]}'],
    '/refused': [400, '{"errorCode": "BAD\\ud800", "message": "no\\udc00"}'],
  };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const [status, body] = answers[req.url ?? ''] ?? [404, '{}'];
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const call = (path: string) =>
    callProvider({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 2_000, dispatcher: dispatcherFor([base]) }, { method: 'GET', url: base + path, provider: 'test provider' });

  it('is returned well-formed: each lone surrogate, in keys and values, becomes U+FFFD; pairs stay', async () => {
    const answer = await call('/ok');
    expect(answer).toEqual({
      status_code: 200,
      response: { 'k\uFFFD': ['a\uFFFDb', '\ud83d\ude00'], nested: [[{ deep: '\uFFFD' }]] },
    });
  });

  it('is well-formed in the failure a 4xx answer becomes (message and kept response)', async () => {
    const err = await call('/refused').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    const failure = err as ApplicationFailure;
    expect(failure.message).toBe('test provider answered HTTP 400: BAD\uFFFD: no\uFFFD');
    expect(failure.details).toEqual([{ status_code: 400, response: { errorCode: 'BAD\uFFFD', message: 'no\uFFFD' } }]);
  });
});
