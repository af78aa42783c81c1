import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/** TEMPORAL_TLS_*: files (PEM) for every connection to the Temporal frontend. */
export interface TemporalTlsSettings {
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  serverName?: string;
}

export function parseTemporalTls(env: NodeJS.ProcessEnv): TemporalTlsSettings | undefined {
  const settings: TemporalTlsSettings = {
    certFile: env.TEMPORAL_TLS_CERT || undefined,
    keyFile: env.TEMPORAL_TLS_KEY || undefined,
    caFile: env.TEMPORAL_TLS_CA || undefined,
    serverName: env.TEMPORAL_TLS_SERVER_NAME || undefined,
  };
  if (!Object.values(settings).some(Boolean)) return undefined;
  if (Boolean(settings.certFile) !== Boolean(settings.keyFile)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: a client certificate needs its key');
  }
  return settings;
}

/**
 * The SDK's `tls` option (Connection, NativeConnection) for those settings:
 * undefined is plain TCP; any setting turns TLS on, a certificate pair makes it mutual.
 */
export function temporalTlsOptions(settings: TemporalTlsSettings | undefined, read = (file: string) => fs.readFileSync(file)): TLSConfig | undefined {
  if (!settings) return undefined;
  return {
    ...(settings.certFile && settings.keyFile ? { clientCertPair: { crt: read(settings.certFile), key: read(settings.keyFile) } } : {}),
    ...(settings.caFile ? { serverRootCACertificate: read(settings.caFile) } : {}),
    ...(settings.serverName ? { serverNameOverride: settings.serverName } : {}),
  };
}
