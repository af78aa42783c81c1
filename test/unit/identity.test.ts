import type { IncomingMessage } from 'node:http';
import type { Database } from '../../db/client';
import { loadConfig } from '../../src/config';
import { currentLoginSession, LoginSessionCookie } from '../../src/identity/login-sessions';
import { looksLikeJwt } from '../../src/identity/end-user-tokens';
import { redirectUriProblem } from '../../workflows/identity/common';

describe('redirect URI rules', () => {
  it.each(['https://app.example.com/callback', 'https://app.example.com:8443/cb?x=1', 'http://127.0.0.1:5173/cb', 'http://[::1]/cb', 'http://localhost:3000/'])(
    'accepts %s',
    (uri) => expect(redirectUriProblem(uri)).toBeUndefined(),
  );

  it.each([
    ['http off loopback', 'http://app.example.com/cb', /https/],
    ['a fragment', 'https://app.example.com/cb#x', /fragment/],
    ['an empty fragment', 'https://app.example.com/cb#', /fragment/],
    ['credentials', 'https://user:pw@app.example.com/cb', /credentials/],
    ['another scheme', 'javascript:alert(1)', /https/],
    ['a relative URI', '/callback', /absolute/],
  ])('refuses %s', (_what, uri, message) => expect(redirectUriProblem(uri)).toMatch(message));
});

describe('login host configuration', () => {
  it('defaults LOGIN_PORT to PORT + 1 and LOGIN_URL to it on loopback', () => {
    expect(loadConfig({ PORT: '4000' }).identity).toEqual({
      loginPort: 4001,
      loginUrl: 'http://127.0.0.1:4001',
      endUserTokenTtlS: 600,
      loginSessionTtlS: 604800,
    });
  });

  it('takes LOGIN_URL without its trailing slash, and refuses one with a query', () => {
    expect(loadConfig({ LOGIN_URL: 'https://login.example.com/' }).identity.loginUrl).toBe('https://login.example.com');
    expect(() => loadConfig({ LOGIN_URL: 'https://login.example.com/?x=1' })).toThrow(/LOGIN_URL/);
    expect(() => loadConfig({ LOGIN_URL: 'login.example.com' })).toThrow(/LOGIN_URL/);
  });

  it('refuses a LOGIN_URL over plain http off loopback, naming the rule', () => {
    for (const bad of ['http://login.example.com', 'http://10.0.0.5:3001', 'http://127.0.0.1.nip.io:3001']) {
      expect(() => loadConfig({ LOGIN_URL: bad })).toThrow('LOGIN_URL must be https, or http on a loopback host');
    }
    for (const loopback of ['http://127.0.0.1:3001', 'http://[::1]:3001', 'http://localhost:3001']) {
      expect(loadConfig({ LOGIN_URL: loopback }).identity.loginUrl).toBe(loopback);
    }
  });

  it('refuses END_USER_TOKEN_TTL_S of 0', () => {
    expect(() => loadConfig({ END_USER_TOKEN_TTL_S: '0' })).toThrow(/END_USER_TOKEN_TTL_S/);
  });
});

describe('the login session cookie', () => {
  const CLIENT = '0b7c1a52-3d2e-4f6a-9b1c-2d3e4f5a6b7c';
  const expires = new Date('2030-01-01T00:00:00Z');

  it('is HttpOnly and SameSite=Lax, neither Secure nor prefixed on an http login host', () => {
    const plain = new LoginSessionCookie('http://127.0.0.1:3001').serialize(CLIENT, 'ls_secret', expires);
    expect(plain).toMatch(new RegExp(`^wes_login_${CLIENT}=ls_secret;`));
    expect(plain).toMatch(/HttpOnly/);
    expect(plain).toMatch(/SameSite=Lax/);
    expect(plain).not.toMatch(/Secure/);
  });

  it('is __Host- prefixed on an https login host: Secure, on Path=/ and without Domain, as the prefix requires', () => {
    const secure = new LoginSessionCookie('https://login.example.com').serialize(CLIENT, 'ls_secret', expires);
    expect(secure).toMatch(new RegExp(`^__Host-wes_login_${CLIENT}=ls_secret;`));
    expect(secure).toMatch(/; Secure/);
    expect(secure).toMatch(/; Path=\/(;|$)/);
    expect(secure).not.toMatch(/Domain=/i);
  });

  it('on an https login host, ignores an unprefixed session cookie, which a sibling subdomain could plant', async () => {
    const req = { headers: { cookie: `wes_login_${CLIENT}=ls_planted` } } as IncomingMessage;
    // Never queried: a lookup would throw on this empty object.
    const db = {} as Database;
    await expect(currentLoginSession(db, req, CLIENT, new LoginSessionCookie('https://login.example.com'))).resolves.toBeUndefined();
  });
});

it('tells end-user JWTs from org-member tokens', () => {
  expect(looksLikeJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(true);
  expect(looksLikeJwt('wes_abcdefghijklmnopqrstuvwxyz')).toBe(false);
});

describe('TRUST_PROXY', () => {
  it('takes a hop count or the proxies named, trusts none when unset, and refuses trusting every proxy', () => {
    expect(loadConfig({}).trustProxy).toBeUndefined();
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });

  it.each(['10.0.0.0/33', 'proxy.example', 'loopback, 300.1.1.1', '10.0.0.1/255.0.255.0'])(
    'refuses %p at start-up, naming the variable, before Express would',
    (raw) => {
      expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(/^TRUST_PROXY: .*expected a hop count/);
    },
  );
});
