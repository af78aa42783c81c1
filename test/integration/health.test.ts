import { api } from '../support/api';
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
  });
});
