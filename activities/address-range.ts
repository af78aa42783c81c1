import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Only the well-known NAT64 prefix has a fixed place for the IPv4 address (the last 32 bits, RFC 6052 §2.2);
// the local-use 64:ff9b:1::/48 may embed it anywhere, so ipaddr.js's 'rfc6052' range stays refused as a whole.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
// RFC 4291 §2.4: global unicast is 2000::/3; ipaddr.js calls the rest of ::/8 (e.g. the IPv4-compatible ::7f00:1) 'unicast'.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** ipaddr.js range names, as an operator reads them in a refusal. */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved or documentation',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  rfc6052: 'NAT64 local-use',
  '6to4': '6to4 relay',
  teredo: 'Teredo',
};

/** Parses an address as a resolver or a URL host gives it; IPv4-mapped IPv6 becomes the IPv4 address. */
export function parseAddress(address: string): Address {
  return ipaddr.process(address);
}

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.range() === 'rfc6145' || address.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(address.toByteArray().slice(12));
  return undefined;
}

/**
 * The name of the range an address is in when it is not a public unicast address (loopback,
 * private, link-local, …), or undefined when it is one. An IPv4 address carried in IPv6
 * (mapped, translated, NAT64) is judged by that IPv4 address.
 */
export function nonPublicRange(address: Address): string | undefined {
  if (address.kind() === 'ipv4') {
    const range = address.range();
    return range === 'unicast' ? undefined : (RANGE_NAMES[range] ?? range);
  }
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return nonPublicRange(v6.toIPv4Address());
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const range = nonPublicRange(embedded);
    return range && `${range}, IPv4 in IPv6`;
  }
  const range = v6.range();
  if (range !== 'unicast') return RANGE_NAMES[range] ?? range;
  return v6.match(GLOBAL_UNICAST_V6) ? undefined : 'reserved or documentation';
}
