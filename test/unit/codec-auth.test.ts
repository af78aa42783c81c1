import { parseCodecAuth } from '../../src/temporal-codec/codec-auth.config';
import { isLoopbackAddress } from '../../src/temporal-codec/loopback';

describe('parseCodecAuth', () => {
  it('defaults to token', () => {
    expect(parseCodecAuth({})).toEqual({ mode: 'token' });
    expect(parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'loopback' })).toEqual({ mode: 'loopback' });
  });

  it('names the setting and the allowed values for an unknown mode', () => {
    expect(() => parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'none' })).toThrow('TEMPORAL_CODEC_AUTH must be one of token, loopback, jwt, got "none"');
  });

  it('needs an issuer URL and an audience for jwt', () => {
    expect(() => parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_AUDIENCE: 'ui' })).toThrow(/TEMPORAL_CODEC_JWT_ISSUER/);
    expect(() => parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_ISSUER: 'https://sso.example' })).toThrow(/TEMPORAL_CODEC_JWT_AUDIENCE/);
    expect(() => parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_ISSUER: 'sso', TEMPORAL_CODEC_JWT_AUDIENCE: 'ui' })).toThrow(
      'TEMPORAL_CODEC_JWT_ISSUER must be an absolute URL, got "sso"',
    );
    expect(
      parseCodecAuth({ TEMPORAL_CODEC_AUTH: 'jwt', TEMPORAL_CODEC_JWT_ISSUER: 'https://sso.example', TEMPORAL_CODEC_JWT_AUDIENCE: 'ui' }),
    ).toEqual({ mode: 'jwt', jwt: { issuer: 'https://sso.example', audience: 'ui', jwksUrl: undefined } });
  });
});

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])('%s is loopback', (a) => expect(isLoopbackAddress(a)).toBe(true));
  it.each(['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '0.0.0.0', '', undefined, 'localhost'])('%s is not', (a) =>
    expect(isLoopbackAddress(a)).toBe(false),
  );
});
