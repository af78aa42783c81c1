import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { eq } from 'drizzle-orm';
import { ConnectionStore } from '../../activities/connections';
import { loadMasterKey, SecretBox } from '../../activities/secret-box';
import type { DatabaseHandle } from '../../db/client';
import { connections } from '../../db/schema';
import { openMigratedPglite } from '../support/pglite';

describe('SecretBox', () => {
  const master = randomBytes(32);
  const box = SecretBox.derive(master, 'connections');

  it('round-trips and detects tampering and the wrong context', () => {
    const sealed = box.seal(Buffer.from('s3cret'), Buffer.from('ctx'));
    expect(sealed.toString('latin1')).not.toContain('s3cret');
    expect(box.open(sealed, Buffer.from('ctx')).toString()).toBe('s3cret');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(() => box.open(tampered, Buffer.from('ctx'))).toThrow();
    expect(() => box.open(sealed, Buffer.from('other'))).toThrow();
  });

  it('derives a different key per purpose', () => {
    expect(SecretBox.derive(master, 'temporal-payloads').keyId).not.toBe(box.keyId);
    const sealed = box.seal(Buffer.from('x'));
    expect(() => SecretBox.derive(master, 'temporal-payloads').open(sealed)).toThrow();
  });

  it('loads ENGINE_SECRET_KEY, else the dev key file, and generates it only when asked', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-'));
    expect(() => loadMasterKey({}, dir, false)).toThrow(/ENGINE_SECRET_KEY is not set/);
    const generated = loadMasterKey({}, dir, true);
    expect(fs.statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({}, dir, false)).toEqual(generated);
    const hex = randomBytes(32).toString('hex');
    expect(loadMasterKey({ ENGINE_SECRET_KEY: hex }, dir, false).toString('hex')).toBe(hex);
    expect(() => loadMasterKey({ ENGINE_SECRET_KEY: 'short' }, dir, false)).toThrow(/32 bytes/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

const ESIGN_ROOT = 'https://esign.example.com/api';

// On PGlite, like the projection suite.
describe('ConnectionStore', () => {
  let database: DatabaseHandle;
  let store: ConnectionStore;

  beforeAll(async () => {
    database = await openMigratedPglite();
    store = new ConnectionStore(database.db, SecretBox.derive(randomBytes(32), 'connections'));
  });
  afterAll(() => database.close());

  it('keeps secrets encrypted at rest and resolves them only in their organization and plugin', async () => {
    const row = (await store.create('org_a', 'dbhost', 'prod', { api_token: 'napi_supersecret' }, { api_url: 'https://x' }))!;
    const [raw] = await database.db.select().from(connections).where(eq(connections.connectionUuid, row.connectionUuid));
    expect(JSON.stringify(raw)).not.toContain('napi_supersecret');

    await expect(store.resolve({ organization_uuid: 'org_a', connection_uuid: row.connectionUuid, plugin: 'dbhost' })).resolves.toEqual({
      secrets: { api_token: 'napi_supersecret' },
      config: { api_url: 'https://x' },
      destination: 'https://x',
    });
    const otherOrg = await store.resolve({ organization_uuid: 'org_b', connection_uuid: row.connectionUuid, plugin: 'dbhost' }).catch((e) => e);
    expect(otherOrg).toBeInstanceOf(ApplicationFailure);
    expect(otherOrg).toMatchObject({ type: 'connection_not_found', nonRetryable: true });
    const wrongPlugin = await store.resolve({ organization_uuid: 'org_a', connection_uuid: row.connectionUuid, plugin: 'esign' }).catch((e) => e);
    expect(wrongPlugin).toMatchObject({ type: 'connection_plugin_mismatch', nonRetryable: true });
  });

  it('takes a connection id in upper case, as the routes and start inputs accept it', async () => {
    const row = (await store.create('org_u', 'dbhost', 'upper', { api_token: 'napi_upper' }, { api_url: 'https://x' }))!;
    const upper = row.connectionUuid.toUpperCase();
    expect((await store.get('org_u', upper))?.connectionUuid).toBe(row.connectionUuid);
    await expect(store.resolve({ organization_uuid: 'org_u', connection_uuid: upper, plugin: 'dbhost' })).resolves.toMatchObject({
      secrets: { api_token: 'napi_upper' },
    });
    expect(await store.get('org_u', 'not-a-uuid')).toBeUndefined();
  });

  it('refuses ciphertext moved to another tenant row', async () => {
    const a = (await store.create('org_a', 'esign', 'a', { api_token: 'token-a' }, { base_url: ESIGN_ROOT }))!;
    const b = (await store.create('org_b', 'esign', 'b', { api_token: 'token-b' }, { base_url: ESIGN_ROOT }))!;
    await database.db.update(connections).set({ secretsCiphertext: a.secretsCiphertext }).where(eq(connections.connectionUuid, b.connectionUuid));
    await expect(store.resolve({ organization_uuid: 'org_b', connection_uuid: b.connectionUuid, plugin: 'esign' })).rejects.toThrow(
      /unable to authenticate|auth/i,
    );
  });

  it('rotates secrets and refuses a duplicate name in one organization', async () => {
    const row = (await store.create('org_c', 'esign', 'main', { api_token: 'old' }, { base_url: ESIGN_ROOT }))!;
    expect(await store.create('org_c', 'esign', 'main', { api_token: 'x' }, { base_url: ESIGN_ROOT })).toBeUndefined();
    expect(await store.create('org_d', 'esign', 'main', { api_token: 'x' }, { base_url: ESIGN_ROOT })).toBeDefined();
    await store.update(row, { secrets: { api_token: 'new' } });
    const resolved = await store.resolve({ organization_uuid: 'org_c', connection_uuid: row.connectionUuid, plugin: 'esign' });
    expect(resolved.secrets).toEqual({ api_token: 'new' });
    expect(await store.delete('org_d', row.connectionUuid)).toBe(false);
    expect(await store.delete('org_c', row.connectionUuid)).toBe(true);
  });

  it('an esign connection stored before base_url existed sends its token nowhere: resolving it fails closed', async () => {
    const legacy = (await store.create('org_e', 'esign', 'legacy', { api_token: 'legacy-token' }, {}))!;
    const err = await store.resolve({ organization_uuid: 'org_e', connection_uuid: legacy.connectionUuid, plugin: 'esign' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'connection_destination_missing', nonRetryable: true, message: expect.stringContaining('has no base_url') });
    expect(err.message).not.toContain('legacy-token');
  });
});
