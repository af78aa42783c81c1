import { loadConfig } from '../../src/config';
import { sessionCookie } from '../../src/identity/login-sessions';
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

  it('refuses END_USER_TOKEN_TTL_S of 0', () => {
    expect(() => loadConfig({ END_USER_TOKEN_TTL_S: '0' })).toThrow(/END_USER_TOKEN_TTL_S/);
  });
});

describe('the login session cookie', () => {
  const expires = new Date('2030-01-01T00:00:00Z');

  it('is HttpOnly and SameSite=Lax, Secure only on an https login host', () => {
    const plain = sessionCookie('ls_secret', expires, 'http://127.0.0.1:3001');
    expect(plain).toMatch(/^wes_login=ls_secret;/);
    expect(plain).toMatch(/HttpOnly/);
    expect(plain).toMatch(/SameSite=Lax/);
    expect(plain).not.toMatch(/Secure/);
    expect(sessionCookie('ls_secret', expires, 'https://login.example.com')).toMatch(/Secure/);
  });
});

it('tells end-user JWTs from org-member tokens', () => {
  expect(looksLikeJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(true);
  expect(looksLikeJwt('wes_abcdefghijklmnopqrstuvwxyz')).toBe(false);
});
