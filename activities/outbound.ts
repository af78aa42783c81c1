import { isIP } from 'node:net';
import { destinationRefusal, type OutboundAllowList } from './outbound-allow';

/**
 * Outbound calls to providers go over https; ALLOW_HTTP_HOSTS names the hosts
 * (host, or host:port) that may be called over plain http, such as loopback
 * test doubles.
 */
export function parseAllowHttpHosts(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

/** Returns why the URL may not be called, or undefined when it may. */
export function outboundUrlProblem(url: string, allowHttpHosts: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol !== 'http:') return 'must use https';
  const host = parsed.hostname.toLowerCase();
  const hostPort = `${host}:${parsed.port || '80'}`;
  if (allowHttpHosts.includes(host) || allowHttpHosts.includes(hostPort)) return undefined;
  return `must use https (plain http only for hosts in ALLOW_HTTP_HOSTS)`;
}

/**
 * Returns why a URL whose host is an address literal may not be called (a non-public address
 * outside OUTBOUND_ALLOW), or undefined. Host names are not resolved here: what a name resolves
 * to is checked by the worker when it connects.
 */
export function literalAddressProblem(url: string, allow: OutboundAllowList): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) return undefined;
  const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
  return destinationRefusal(allow, { host, address: host, port });
}
