import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { nonPublicRange, parseAddress } from './address-range';

/** One OUTBOUND_ALLOW entry: a host name, or an address range; either may be limited to one port. */
export type OutboundAllowEntry = ({ name: string } | { range: [ipaddr.IPv4 | ipaddr.IPv6, number] }) & { port?: number };

export type OutboundAllowList = readonly OutboundAllowEntry[];

export interface Destination {
  /** The URL's host as the client parsed it (lower case, IPv6 without brackets). */
  host: string;
  /** The address about to be connected to: the host itself, or one the host resolved to. */
  address: string;
  port: number;
}

// `[v6]`, `[v6]:port`, `host`, `host:port` (a bare IPv6 address is handled before this).
const HOST_PORT = /^(?:\[([^\]]+)\]|([^:/[\]@?#\s]+))(?::(\d{1,5}))?$/;

function parseEntry(entry: string): OutboundAllowEntry {
  const invalid = () => new Error(`OUTBOUND_ALLOW: "${entry}" is not a host, host:port, [IPv6]:port or CIDR range`);
  if (entry.includes('/')) {
    if (!ipaddr.isValidCIDR(entry)) throw invalid();
    return { range: ipaddr.parseCIDR(entry) };
  }
  if (isIP(entry) === 6) return { range: [parseAddress(entry), 128] };
  const match = HOST_PORT.exec(entry);
  if (!match) throw invalid();
  const [, bracketed, plain, portText] = match;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) throw invalid();
  let host: string;
  try {
    // The WHATWG URL parser is what fetch applies to a URL: entries are compared in the form it gives.
    host = new URL(`http://${bracketed ? `[${bracketed}]` : plain}`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    throw invalid();
  }
  if (isIP(host)) {
    const address = parseAddress(host);
    return { range: [address, address.kind() === 'ipv4' ? 32 : 128], port };
  }
  return { name: host, port };
}

/**
 * OUTBOUND_ALLOW: comma-separated hosts, host:port, [IPv6]:port and CIDR ranges the worker may
 * call although they are not public (on-premises providers, loopback test doubles). An invalid
 * entry stops the process at start rather than silently allowing or refusing something else.
 */
export function parseOutboundAllow(value: string | undefined): OutboundAllowList {
  return (value ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
    .map(parseEntry);
}

function allows(entry: OutboundAllowEntry, destination: Destination, address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (entry.port !== undefined && entry.port !== destination.port) return false;
  if ('name' in entry) return entry.name === destination.host;
  const [network, bits] = entry.range;
  return network.kind() === address.kind() && address.match(network, bits);
}

/**
 * Why the outbound policy refuses this connection, or undefined when it may be made: an address
 * that is not public unicast is refused unless an OUTBOUND_ALLOW entry names the host, or the
 * address, with the port when the entry has one. The message never shows a resolved address.
 */
export function destinationRefusal(allow: OutboundAllowList, destination: Destination): string | undefined {
  const address = parseAddress(destination.address);
  const range = nonPublicRange(address);
  if (!range || allow.some((entry) => allows(entry, destination, address))) return undefined;
  const subject = isIP(destination.host) ? `${destination.host} is` : `${destination.host} resolves to`;
  return `${subject} a non-public address (${range}) not in OUTBOUND_ALLOW`;
}
