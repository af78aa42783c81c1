import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { callProvider, MAX_PROVIDER_ANSWER_BYTES } from '../../activities/provider-http';
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
  /** How many bytes the streamed answer got out before the client stopped reading. */
  let streamedBytes = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect') return void res.writeHead(302, { location: 'https://elsewhere.example/' }).end();
      if (req.url === '/huge-declared') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_PROVIDER_ANSWER_BYTES + 1) });
        return void res.write('[');
      }
      if (req.url === '/huge-streamed') return void streamForever(res);
      if (req.url === '/at-limit') {
        const json = JSON.stringify('x'.repeat(MAX_PROVIDER_ANSWER_BYTES - 2));
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(json);
      }
      const [status, body] = answers[req.url ?? ''] ?? [404, '{}'];
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  /** Chunked, with no length, 64 KiB at a time for as long as the client reads. */
  function streamForever(res: http.ServerResponse) {
    streamedBytes = 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const write = () => {
      while (!res.destroyed && streamedBytes < 64 * MAX_PROVIDER_ANSWER_BYTES) {
        streamedBytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', write);
      }
    };
    write();
  }

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

  it('an answer over the limit fails the call for good as response_too_large, by its length or as it streams', async () => {
    for (const path of ['/huge-declared', '/huge-streamed']) {
      const err = await call(path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'response_too_large', nonRetryable: true, details: [{ status_code: 200 }] });
      expect((err as Error).message).toBe('test provider answered HTTP 200 with more than 1 MiB, more than a run keeps');
    }
    // It stopped reading soon after the limit: not the 64 MiB the provider would have sent.
    expect(streamedBytes).toBeLessThan(8 * MAX_PROVIDER_ANSWER_BYTES);
    expect(await call('/at-limit')).toMatchObject({ status_code: 200, response: expect.any(String) });
  });

  it('a redirect is the answer, not followed: redirect_refused with its status, at once', async () => {
    const err = await call('/redirect').catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'redirect_refused', nonRetryable: true, message: 'test provider answered HTTP 302', details: [{ status_code: 302, response: null }] });
  });
});
