import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * The certificate of the inward service (SANs provider.test, localhost, 127.0.0.1, ::1), self-signed
 * and valid until 2126. The test stack's processes trust it (NODE_EXTRA_CA_CERTS), as a worker
 * would trust an internal CA: only the outbound policy stands between the worker and this service.
 */
export const INWARD_CERT_PATH = path.join(__dirname, 'tls', 'provider.crt');
const INWARD_KEY_PATH = path.join(__dirname, 'tls', 'provider.key');

/** What the inward service answers; it must never show up in a run. */
export const INWARD_SECRET = { internal: 'inward-service-secret-3b9d' };

export interface InwardService {
  port: number;
  /** Every TCP connection accepted, TLS or not, before any byte is read. */
  connections: number;
  close(): Promise<void>;
}

/**
 * An https service on 127.0.0.1 and, where the machine has IPv6, on ::1 (same port), answering
 * every request with INWARD_SECRET and counting connections: the target of the outbound-policy attacks.
 */
export async function startInwardService(): Promise<InwardService> {
  const tls = { cert: fs.readFileSync(INWARD_CERT_PATH), key: fs.readFileSync(INWARD_KEY_PATH) };
  const servers: https.Server[] = [];
  const service: InwardService = {
    port: 0,
    connections: 0,
    close: async () => {
      await Promise.all(
        servers.map((server) => {
          server.closeAllConnections();
          return new Promise<void>((r) => server.close(() => r()));
        }),
      );
    },
  };
  const listen = (host: string, port: number) => {
    const server = https.createServer(tls, (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(INWARD_SECRET)),
    );
    server.on('connection', () => service.connections++);
    return new Promise<https.Server>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  };
  const v4 = await listen('127.0.0.1', 0);
  servers.push(v4);
  service.port = (v4.address() as AddressInfo).port;
  // Without IPv6 (or with the port taken there) the IPv6 attacks still run: nothing may connect anyway.
  const v6 = await listen('::1', service.port).catch(() => undefined);
  if (v6) servers.push(v6);
  return service;
}
