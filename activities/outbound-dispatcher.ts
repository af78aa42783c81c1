import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { destinationRefusal, type OutboundAllowList } from './outbound-allow';

/** Resolves a host name to every address it has; tests pass a stub resolver instead of DNS. */
export type Resolve = (hostname: string) => Promise<Array<{ address: string }>>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true });

/** A connection the outbound policy refused; no socket was opened for it. */
export class OutboundPolicyError extends Error {
  override readonly name = 'OutboundPolicyError';
}

const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

/**
 * The address to connect to: the host itself when it is an address literal, else what it
 * resolves to now. Every address of the answer is checked, so a name that mixes a public
 * address with an inward one is refused whichever one a connection would have picked.
 */
export async function checkedAddress(allow: OutboundAllowList, resolve: Resolve, options: { hostname: string; protocol: string; port: string }) {
  const host = options.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = Number(options.port) || defaultPort(options.protocol);
  const addresses = isIP(host) ? [host] : (await resolve(host)).map((a) => a.address);
  if (!addresses.length) throw new Error(`${host} has no address`);
  for (const address of addresses) {
    const refusal = destinationRefusal(allow, { host, address, port });
    if (refusal) throw new OutboundPolicyError(refusal);
  }
  return addresses[0];
}

/**
 * The undici dispatcher every provider call goes through. Each new connection resolves its host,
 * checks the answer against the outbound policy, then connects to the address it checked, never
 * resolving again: a name that resolves inward, or a DNS answer that changes between a check and
 * the connection (rebinding), cannot reach an inward address. TLS still verifies the certificate
 * against the host name (SNI and verification use the name, the socket the checked address).
 */
export function createOutboundDispatcher(options: { allow: OutboundAllowList; resolve?: Resolve }): Dispatcher {
  const { allow, resolve = systemResolve } = options;
  const connect = buildConnector({});
  return new Agent({
    connect: (connectOptions, callback) => {
      checkedAddress(allow, resolve, connectOptions).then(
        (address) => connect({ ...connectOptions, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}
