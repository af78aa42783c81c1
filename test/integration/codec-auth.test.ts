import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { sealPayload } from '../../activities/payload-codec';
import { MasterPayloadKeys } from '../../activities/payload-keys';
import { projectRoot } from '../../db/client';
import { payloadsToJson } from '../../src/temporal-codec/payload-json';
import { uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { waitFor } from '../support/ports';

/**
 * TEMPORAL_CODEC_AUTH: who may call /api/temporal-codec without an org-member token.
 * Each mode runs in its own API process; payloads are sealed here under that process's key.
 */
jest.setTimeout(60_000);

const UI_ORIGIN = 'http://127.0.0.1:8233';
const secretKey = randomBytes(32).toString('hex');
const keys = new MasterPayloadKeys(Buffer.from(secretKey, 'hex'));
const orgX = `org_${randomUUID()}`;
const orgY = `org_${randomUUID()}`;
const sealed = (org: string, value: string): Payload => sealPayload(keys, org, defaultPayloadConverter.toPayload({ value })!);
const body = () => JSON.stringify(payloadsToJson([sealed(orgX, 'input-of-x'), sealed(orgY, 'input-of-y')]));

interface Decoded {
  payloads: Array<{ metadata: Record<string, string>; data: string }>;
}
/** The values a decode answer holds in clear (a payload left encrypted yields none). */
const clearValues = (answer: Decoded) =>
  answer.payloads.flatMap((p) => {
    if (Buffer.from(p.metadata.encoding, 'base64').toString() !== 'json/plain') return [];
    return [JSON.parse(Buffer.from(p.data, 'base64').toString()).value as string];
  });

/** The decode answer of a 200, or a failure that shows what came back instead. */
async function decoded(res: Response): Promise<Decoded> {
  const text = await res.text();
  expect({ status: res.status, body: res.status === 200 ? '' : text }).toEqual({ status: 200, body: '' });
  return JSON.parse(text) as Decoded;
}

function post(base: string, path: string, headers: Record<string, string>, payload = body()) {
  return fetch(`${base}/api/temporal-codec/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
}

function codecApi(overrides: Record<string, string>) {
  return new ExtraApi({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, ENGINE_SECRET_KEY: secretKey, TEMPORAL_UI_ORIGINS: UI_ORIGIN, ...overrides });
}

/** This machine's first non-loopback IPv4 address: a peer the loopback mode must refuse. */
function externalAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  if (!found) throw new Error('this machine has no non-loopback IPv4 address to test a remote peer from');
  return found.address;
}

describe('TEMPORAL_CODEC_AUTH=loopback', () => {
  const extra = codecApi({ TEMPORAL_CODEC_AUTH: 'loopback', HOST: '0.0.0.0' });
  let token: string;
  let memberOrg: string;

  beforeAll(async () => {
    await extra.start();
    const created = JSON.parse(extra.cli(['org', 'create', uniqueId('codec-auth'), '--json']));
    token = created.token;
    memberOrg = created.organization_uuid;
  });
  afterAll(() => extra.stop());

  it("decodes every organization's payloads for a loopback caller with the UI's Origin and no token", async () => {
    const res = await post(extra.url, 'decode', { origin: UI_ORIGIN });
    expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(clearValues(await decoded(res)).sort()).toEqual(['input-of-x', 'input-of-y']);
  });

  it('refuses a loopback caller without Origin, or with an Origin that is not the UI', async () => {
    const variants: Array<Record<string, string>> = [{}, { origin: 'http://127.0.0.1:9999' }, { origin: 'https://evil.example' }];
    for (const headers of variants) {
      const res = await post(extra.url, 'decode', headers);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/TEMPORAL_UI_ORIGINS/);
    }
  });

  it("refuses a caller from a non-loopback address even with the UI's Origin", async () => {
    const port = new URL(extra.url).port;
    const res = await post(`http://${externalAddress()}:${port}`, 'decode', { origin: UI_ORIGIN });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain('input-of');
  });

  it('still takes an org-member token, which decodes only its own organization', async () => {
    const payload = JSON.stringify(payloadsToJson([sealed(memberOrg, 'mine'), sealed(orgX, 'input-of-x')]));
    const res = await post(extra.url, 'decode', { authorization: `Bearer ${token}` }, payload);
    expect(clearValues(await decoded(res))).toEqual(['mine']);
    expect((await post(extra.url, 'decode', { authorization: 'Bearer not-a-token', origin: UI_ORIGIN })).status).toBe(401);
  });

  it('refuses to encode for a tokenless caller, who has no organization to seal under', async () => {
    const plain = JSON.stringify(payloadsToJson([defaultPayloadConverter.toPayload('x')!]));
    const res = await post(extra.url, 'encode', { origin: UI_ORIGIN }, plain);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('encode_needs_organization');
  });
});

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

describe('TEMPORAL_CODEC_AUTH=jwt', () => {
  const AUDIENCE = 'temporal-ui';
  let issuerServer: http.Server;
  let issuer: string;
  let extra: ExtraApi;
  let privateKey: PrivateKey;
  let strangerKey: PrivateKey;
  let jwksRequests = 0;

  const sign = (key: PrivateKey, claims: { iss?: string; aud?: string; exp?: string | number } = {}) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('alice@example.com')
      .setIssuer(claims.iss ?? issuer)
      .setAudience(claims.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(claims.exp ?? '5m')
      .sign(key);

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    strangerKey = (await generateKeyPair('RS256')).privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    // A local OIDC issuer: the discovery document and the JWKS it names.
    issuerServer = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      if (req.url === '/jwks') {
        jwksRequests += 1;
        return res.end(JSON.stringify({ keys: [jwk] }));
      }
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
    extra = codecApi({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_ISSUER: issuer, TEMPORAL_CODEC_JWT_AUDIENCE: AUDIENCE });
    await extra.start();
  });
  afterAll(async () => {
    await extra?.stop();
    await new Promise((r) => issuerServer.close(r));
  });

  it("decodes every organization's payloads for a token the issuer signed, keys found through discovery", async () => {
    const res = await post(extra.url, 'decode', { authorization: `Bearer ${await sign(privateKey)}`, origin: UI_ORIGIN });
    expect(clearValues(await decoded(res)).sort()).toEqual(['input-of-x', 'input-of-y']);
    expect(jwksRequests).toBeGreaterThan(0);
    // The audit line reaches this process through the child's stdout, possibly after the answer.
    await waitFor('the decode to be logged with its subject', async () => extra.output.includes('alice@example.com') || undefined, 10_000, 50);
  });

  it('refuses a wrong audience, a wrong issuer, an expired token, a foreign key, and no token at all', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    const bad = [
      await sign(privateKey, { aud: 'someone-else' }),
      await sign(privateKey, { iss: 'https://other-issuer.example' }),
      await sign(privateKey, { exp: past }),
      await sign(strangerKey),
    ];
    for (const token of bad) {
      const res = await post(extra.url, 'decode', { authorization: `Bearer ${token}`, origin: UI_ORIGIN });
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('input-of');
    }
    // The loopback exemption does not exist in jwt mode.
    expect((await post(extra.url, 'decode', { origin: UI_ORIGIN })).status).toBe(401);
  });

  it('refuses to start without an issuer and an audience', async () => {
    const broken = codecApi({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_ISSUER: issuer });
    const run = spawnSync(process.execPath, [path.join(projectRoot(), 'dist', 'src', 'main.js'), 'api'], { env: broken.env, encoding: 'utf8', timeout: 30_000 });
    await broken.stop();
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('TEMPORAL_CODEC_AUTH=jwt needs TEMPORAL_CODEC_JWT_AUDIENCE');
  });
});
