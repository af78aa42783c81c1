import { loadConfig } from '../../src/config';
import { parseTemporalTls, temporalTlsOptions } from '../../src/temporal-tls';

const files: Record<string, string> = { '/tls/client.pem': 'CERT', '/tls/client.key': 'KEY', '/tls/ca.pem': 'CA' };
const read = (file: string) => Buffer.from(files[file]);

describe('TEMPORAL_TLS_* to the SDK tls option', () => {
  it('is plain TCP when nothing is set', () => {
    expect(parseTemporalTls({})).toBeUndefined();
    expect(temporalTlsOptions(undefined, read)).toBeUndefined();
    expect(loadConfig({}).temporalTls).toBeUndefined();
  });

  it('maps a certificate pair, a CA and a server name to mutual TLS', () => {
    const settings = parseTemporalTls({
      TEMPORAL_TLS_CERT: '/tls/client.pem',
      TEMPORAL_TLS_KEY: '/tls/client.key',
      TEMPORAL_TLS_CA: '/tls/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(temporalTlsOptions(settings, read)).toEqual({
      clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
      serverRootCACertificate: Buffer.from('CA'),
      serverNameOverride: 'temporal.internal',
    });
  });

  it('turns TLS on (server authentication only) with just a CA', () => {
    expect(temporalTlsOptions(parseTemporalTls({ TEMPORAL_TLS_CA: '/tls/ca.pem' }), read)).toEqual({ serverRootCACertificate: Buffer.from('CA') });
  });

  it('refuses a certificate without its key, or a key without its certificate', () => {
    expect(() => parseTemporalTls({ TEMPORAL_TLS_CERT: '/tls/client.pem' })).toThrow(/TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/);
    expect(() => loadConfig({ TEMPORAL_TLS_KEY: '/tls/client.key' })).toThrow(/go together/);
  });

  it('reads the files it is given (a missing file is an error at start, not a silent plain connection)', () => {
    expect(() => temporalTlsOptions({ caFile: '/nonexistent/ca.pem' })).toThrow(/ENOENT/);
  });
});
