import fs from 'node:fs';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, esignCalls, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';

const SECRET = 'conn-secret-7b1d9e';

describe('plugins', () => {
  it('lists esign, dbhost and payments with their field schemas', async () => {
    const res = await api('/api/plugins');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.plugins.map((p: { name: string }) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(['dbhost', 'esign', 'payments']);
    expect(byName.dbhost.fields).toEqual(['api_token', 'api_url?']);
    expect(byName.dbhost.secrets_schema.required).toEqual(['api_token']);
    expect(byName.dbhost.config_schema.properties).toHaveProperty('api_url');
    expect(byName.payments.secrets_schema.properties).toHaveProperty('webhook_secrets');
    expect(byName.esign.fields).toEqual(['api_token', 'base_url']);
    expect(byName.esign.config_schema.required).toEqual(['base_url']);
  });
});

describe('connections', () => {
  const create = (body: unknown, token = stackEnv.tokenA) => api('/api/connections', { token, body });

  it('creates, lists, reads, rotates and deletes, never returning a secret', async () => {
    const name = uniqueId('prod');
    const created = await create({ plugin: 'dbhost', name, secrets: { api_token: SECRET }, config: { api_url: 'https://dbhost.example.com' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ connection_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), plugin: 'dbhost', name, created_at: expect.any(String) });
    const id = created.body.connection_uuid;

    const one = await api(`/api/connections/${id.toUpperCase()}`);
    expect(one.body).toEqual({
      connection_uuid: id,
      plugin: 'dbhost',
      name,
      config: { api_url: 'https://dbhost.example.com' },
      created_at: created.body.created_at,
      updated_at: expect.any(String),
    });
    const list = await api('/api/connections?plugin=dbhost');
    expect(list.body.connections.map((c: { connection_uuid: string }) => c.connection_uuid)).toContain(id);

    const rotated = await api(`/api/connections/${id}`, { method: 'PATCH', body: { secrets: { api_token: `${SECRET}-rotated` } } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.connection_uuid).toBe(id);

    for (const body of [created.body, one.body, list.body, rotated.body]) expect(JSON.stringify(body)).not.toContain(SECRET);

    expect((await api(`/api/connections/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/api/connections/${id}`)).status).toBe(404);
  });

  it("another organization's connection is a 404 for every verb", async () => {
    const created = await create({ plugin: 'esign', name: uniqueId('b'), secrets: { api_token: SECRET }, config: { base_url: stackEnv.esignUrl } }, stackEnv.tokenB);
    const id = created.body.connection_uuid;
    const unknown = await api('/api/connections/00000000-0000-4000-8000-000000000000');
    for (const res of [
      await api(`/api/connections/${id}`),
      await api(`/api/connections/${id}`, { method: 'PATCH', body: { name: 'stolen' } }),
      await api(`/api/connections/${id}`, { method: 'DELETE' }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe(unknown.body.error.code);
    }
    expect((await api('/api/connections')).body.connections.map((c: { connection_uuid: string }) => c.connection_uuid)).not.toContain(id);
    expect((await api(`/api/connections/${id}`, { token: stackEnv.tokenB })).status).toBe(200);
  });

  it('validates against the plugin schema, naming fields, and creates nothing on rejection', async () => {
    const before = (await api('/api/connections')).body.connections.length;
    const cases: Array<[unknown, string, string]> = [
      [{ plugin: 'nope', name: 'x', secrets: {} }, 'plugin', 'one_of'],
      [{ plugin: 'dbhost', name: 'x', secrets: {} }, 'secrets.api_token', 'required'],
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 't', extra: 1 } }, 'secrets.extra', 'unknown_field'],
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 't' }, config: { api_url: 'not a url' } }, 'config.api_url', 'format:url'],
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 't' }, config: { api_url: 'https://dbhost.example.com/#f' } }, 'config.api_url', 'api_root'],
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 't' }, config: { api_url: 'https://dbhost.example.com/?a=1' } }, 'config.api_url', 'api_root'],
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 't' }, config: { api_url: 'https://u:p@dbhost.example.com' } }, 'config.api_url', 'api_root'],
      [{ plugin: 'payments', name: 'x', secrets: {} }, 'secrets', 'custom'],
      // A token goes into an HTTP header: one no header can carry would fail every run at call time.
      [{ plugin: 'dbhost', name: 'x', secrets: { api_token: 'bad\ntoken' } }, 'secrets.api_token', 'format:regex'],
      [{ plugin: 'esign', name: 'x', secrets: { api_token: 'bad\r\nX-Injected: 1' }, config: { base_url: 'https://esign.example.com/api' } }, 'secrets.api_token', 'format:regex'],
      [{ plugin: 'esign', name: 'x', secrets: { api_token: 'tok\u0100en' }, config: { base_url: 'https://esign.example.com/api' } }, 'secrets.api_token', 'format:regex'],
      [{ plugin: 'esign', secrets: { api_token: 't' } }, 'name', 'required'],
      [{ plugin: 'esign', name: 'x', secrets: { api_token: 't' } }, 'config.base_url', 'required'],
    ];
    for (const [body, field, rule] of cases) {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toContainEqual(expect.objectContaining({ field, rule }));
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    }
    expect((await api('/api/connections')).body.connections.length).toBe(before);
  });

  it('a rotation to a token no HTTP header can carry is a 422 naming secrets.api_token, and the stored token stays', async () => {
    const created = await create({ plugin: 'dbhost', name: uniqueId('rotate-bad'), secrets: { api_token: SECRET }, config: { api_url: 'https://dbhost.example.com' } });
    expect(created.status).toBe(201);
    const id = created.body.connection_uuid;
    const before = (await api(`/api/connections/${id}`)).body.updated_at;
    const res = await api(`/api/connections/${id}`, { method: 'PATCH', body: { secrets: { api_token: 'bad\ntoken' } } });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'secrets.api_token', rule: 'format:regex', message: expect.stringContaining('visible ASCII') }]);
    expect(JSON.stringify(res.body)).not.toContain('bad\\ntoken');
    expect((await api(`/api/connections/${id}`)).body.updated_at).toBe(before);
  });

  it('a list filter given twice is a 422 naming it, not an unfiltered list; the catalog prefix the same', async () => {
    for (const [path, field] of [
      ['/api/connections?plugin=esign&plugin=dbhost', 'plugin'],
      ['/api/workflows/types?prefix=esign.&prefix=dbhost.', 'prefix'],
      ['/api/connections?plugins=esign', 'plugins'],
    ]) {
      const res = await api(path);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
    }
    const esignOnly = await api('/api/connections?plugin=esign');
    expect(esignOnly.status).toBe(200);
    expect(esignOnly.body.connections.every((c: { plugin: string }) => c.plugin === 'esign')).toBe(true);
  });

  it('refuses a second connection with the same name in one organization (409)', async () => {
    const name = uniqueId('dup');
    const config = { base_url: stackEnv.esignUrl };
    expect((await create({ plugin: 'esign', name, secrets: { api_token: 'a' }, config })).status).toBe(201);
    const dup = await create({ plugin: 'esign', name, secrets: { api_token: 'b' }, config });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('connection_name_taken');
  });

  it('an esign run takes its token from an esign connection of its organization', async () => {
    const conn = await create({ plugin: 'esign', name: uniqueId('esign'), secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } });
    const authorizationid = uniqueId('ok');
    const id = await startRun('esign.authorizations.delete-user-authorization', {
      base_url: stackEnv.esignUrl,
      connection_uuid: conn.body.connection_uuid,
      accountid: '1001',
      userid: 'u-1',
      authorizationid,
    });
    const run = await waitForTerminal(id);
    expect(run.status).toBe('COMPLETED');
    expect(run.state_data).not.toHaveProperty('api_token');
    const calls = await esignCalls(authorizationid);
    expect(calls.map((c) => c.authorization)).toEqual([`Bearer ${ESIGN_VALID_TOKEN}`]);
  });

  it("another organization's connection fails the run closed, before any provider call", async () => {
    const foreign = await create(
      { plugin: 'esign', name: uniqueId('foreign'), secrets: { api_token: ESIGN_VALID_TOKEN }, config: { base_url: stackEnv.esignUrl } },
      stackEnv.tokenB,
    );
    const authorizationid = uniqueId('ok');
    const id = await startRun('esign.authorizations.delete-user-authorization', {
      base_url: stackEnv.esignUrl,
      connection_uuid: foreign.body.connection_uuid,
      accountid: '1001',
      userid: 'u-1',
      authorizationid,
    });
    const run = await waitForTerminal(id);
    expect(run.status).toBe('FAILED');
    expect(run.state_data).toMatchObject({ failure_type: 'connection_not_found', failure_reason: expect.stringContaining('does not exist in this organization') });
    expect(await esignCalls(authorizationid)).toEqual([]);
  });

  it('never writes connection secrets to the log', async () => {
    await new Promise((r) => setTimeout(r, 500));
    expect(fs.readFileSync(stackEnv.logFile, 'utf8')).not.toContain(SECRET);
  });
});
