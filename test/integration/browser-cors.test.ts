import { provisionApp } from '../support/accounts';
import { stackEnv } from '../support/api';

/**
 * The API's CORS for end users' browser apps: the origins of registered redirect URIs only,
 * never with credentials; the codec endpoint keeps its own origins.
 */
describe('CORS for browser apps (origins of registered redirect URIs)', () => {
  let origin: string;

  beforeAll(async () => {
    origin = new URL((await provisionApp()).redirect_uri).origin;
  });

  const preflight = (path: string, from: string, method = 'POST') =>
    fetch(`${stackEnv.apiUrl}${path}`, {
      method: 'OPTIONS',
      headers: { origin: from, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
    });

  it("answers a registered origin's preflight for the run API and the token exchange", async () => {
    for (const path of ['/api/workflows/start', '/api/auth/end-user/token', '/api/workflows/wf_x/stream']) {
      const res = await preflight(path, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('lets the page read answers, errors included', async () => {
    const res = await fetch(`${stackEnv.apiUrl}/api/auth/me`, { headers: { origin } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(res.headers.get('vary')).toMatch(/origin/i);
  });

  it.each([
    ['an unregistered origin', () => 'http://127.0.0.1:1'],
    ['a registered host on another port', () => `${new URL(origin).protocol}//${new URL(origin).hostname}:10`],
    ['the null origin', () => 'null'],
  ])('admits no %s', async (_what, from) => {
    const bad = from();
    const res = await preflight('/api/workflows/start', bad);
    expect(res.status).toBe(405);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${stackEnv.apiUrl}/api/auth/me`, { headers: { origin: bad, authorization: `Bearer ${stackEnv.tokenA}` } });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('leaves the codec endpoint to TEMPORAL_UI_ORIGINS', async () => {
    const res = await preflight('/api/temporal-codec/decode', origin);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
