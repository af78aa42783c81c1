import { api, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';

jest.setTimeout(45_000);

describe('GET /api/health', () => {
  it('answers 200 with both dependencies ok, without a token', async () => {
    const res = await api('/api/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok', temporal: 'ok', database: 'ok' });
  });

  describe('an API process whose Temporal does not answer', () => {
    // Nothing listens on port 1.
    const extra = new ExtraApi({ TEMPORAL_ADDRESS: '127.0.0.1:1' });

    beforeAll(() => extra.start());
    afterAll(() => extra.stop());

    // The abort signal is the hang detector: a health check that never answers fails the test.
    it('answers 503 naming temporal as unavailable, every time, never hanging', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${extra.url}/api/health`, { signal: AbortSignal.timeout(8_000) });
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({
          status: 'unavailable',
          temporal: 'unavailable',
          database: 'ok',
          error: { code: 'unavailable', message: 'temporal not answering', details: null },
        });
      }
    });

    it('keeps serving other requests meanwhile', async () => {
      const [health, unauthenticated] = await Promise.all([
        fetch(`${extra.url}/api/health`, { signal: AbortSignal.timeout(8_000) }),
        fetch(`${extra.url}/api/workflows`, { signal: AbortSignal.timeout(8_000) }),
      ]);
      expect(health.status).toBe(503);
      expect(unauthenticated.status).toBe(401);
    });

    it('answers a start with 503 temporal_unavailable and Retry-After, once the client stops retrying', async () => {
      const token = JSON.parse(extra.cli(['org', 'create', uniqueId('no-temporal'), '--json'])).token;
      const res = await fetch(`${extra.url}/api/workflows/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow_type: 'esign.resources.get-resource-information', initial_data: { base_url: 'https://esign.invalid/api' } }),
        signal: AbortSignal.timeout(40_000),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('temporal_unavailable');
      const list = await fetch(`${extra.url}/api/workflows`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await list.json()) as { runs: unknown[] }).runs).toEqual([]);
    }, 60_000);
  });
});

describe('a method a path does not route', () => {
  it.each([
    ['DELETE', '/api/health', 'GET, HEAD'],
    // A concrete path wins over /api/workflows/{id}, as in OpenAPI.
    ['GET', '/api/workflows/start', 'POST'],
    ['PUT', '/api/temporal-codec/decode', 'OPTIONS, POST'],
    ['POST', '/api/workflows/wf_x', 'GET, HEAD'],
    ['PUT', '/api/connections/3f1c0a9e-0000-4000-8000-000000000000', 'DELETE, GET, HEAD, PATCH'],
  ])('%s %s: 405 with Allow: %s', async (method, path, allow) => {
    const res = await api(path, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.body).toEqual({ error: { code: 'method_not_allowed', message: `${method} is not allowed here; allowed: ${allow}`, details: null } });
  });

  it('an unrouted path is still a 404', async () => {
    const res = await api('/api/no-such-thing', { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
