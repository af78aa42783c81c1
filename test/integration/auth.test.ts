import { api, stackEnv } from '../support/api';
import { STACK_TOKEN_CACHE_TTL_MS } from '../support/stack';

describe('org-member tokens', () => {
  it('GET /api/auth/me resolves the token to its organization', async () => {
    const res = await api('/api/auth/me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user_id: expect.stringMatching(/^tok_/),
      organization_uuid: stackEnv.orgA,
      username: 'alpha-admin',
      token_type: 'org_member',
      principal_type: 'api_token',
    });
    const b = await api('/api/auth/me', { token: stackEnv.tokenB });
    expect(b.body.organization_uuid).toBe(stackEnv.orgB);
  });

  // RFC 6750 §3.1: invalid_token when a bearer token was sent and refused; no error attribute when none was.
  const refused = (message: string) => `Bearer error="invalid_token", error_description="${message}"`;
  it.each([
    ['missing', undefined, 'missing bearer token', 'Bearer'],
    ['malformed', 'Token abc', 'malformed Authorization header', 'Bearer'],
    ['malformed bearer', 'Bearer not a token', 'malformed Authorization header', refused('malformed Authorization header: expected Bearer <token>')],
    ['unknown', 'Bearer wes_thisTokenWasNeverIssued000000000000000000', 'unknown or revoked token', refused('unknown or revoked token')],
  ])('a %s token is a 401 with the error body', async (_, header, message, challenge) => {
    const res = await api('/api/auth/me', { token: null, headers: header ? { authorization: header } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect(res.body.error).toEqual({ code: 'unauthorized', message: expect.stringContaining(message), details: null });
  });

  it('a token created and then revoked with the CLI stops working within TOKEN_CACHE_TTL_MS', async () => {
    const { execFileSync } = await import('node:child_process');
    const path = await import('node:path');
    // The CLI is run exactly as an operator would, against the stack's database.
    const env = { ...process.env, PORT: '0' } as NodeJS.ProcessEnv;
    if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
    else env.DATA_DIR = path.join(process.env.TEST_WORK_DIR!, 'data');
    const cli = (...args: string[]) =>
      execFileSync(process.execPath, ['dist/src/cli.js', ...args], { env, encoding: 'utf8' });

    const created = JSON.parse(cli('token', 'create', '--org', stackEnv.orgA, '--name', 'ci-bot', '--json'));
    expect(created).toEqual({ token_id: expect.stringMatching(/^tok_/), organization_uuid: stackEnv.orgA, token: expect.stringMatching(/^wes_/) });
    const me = await api('/api/auth/me', { token: created.token });
    expect(me.body).toMatchObject({ organization_uuid: stackEnv.orgA, username: 'ci-bot', user_id: created.token_id });

    // The API has just resolved the token, so it may answer from its cache until the TTL is over.
    expect(JSON.parse(cli('token', 'revoke', created.token_id, '--json'))).toEqual({ revoked: true });
    const revokedAt = Date.now();
    let res = await api('/api/auth/me', { token: created.token });
    while (res.status === 200 && Date.now() - revokedAt < STACK_TOKEN_CACHE_TTL_MS + 2_000) {
      await new Promise((r) => setTimeout(r, 100));
      res = await api('/api/auth/me', { token: created.token });
    }
    expect(res.status).toBe(401);
    // Request latency and the 100 ms polling step on top of the TTL.
    expect(Date.now() - revokedAt).toBeLessThan(STACK_TOKEN_CACHE_TTL_MS + 1_000);
    // Every other path stays closed to it too.
    expect((await api('/api/workflows', { token: created.token })).status).toBe(401);
  });

  it('health needs no token and reports both dependencies', async () => {
    const res = await api('/api/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', temporal: 'ok', database: 'ok' });
  });
});
