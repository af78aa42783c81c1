import { nonPublicRange, parseAddress } from '../../activities/address-range';

describe('nonPublicRange: the outbound policy judges the address actually connected to', () => {
  it.each([
    ['8.8.8.8'],
    ['93.184.215.14'],
    ['2606:4700:4700::1111'],
    // NAT64 of a public address: what DNS64 gives an IPv6-only worker for any IPv4-only provider.
    ['64:ff9b::808:808'],
  ])('%s is public', (address) => {
    expect(nonPublicRange(parseAddress(address))).toBeUndefined();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved or documentation'],
    ['198.51.100.7', 'reserved or documentation'],
    ['203.0.113.9', 'reserved or documentation'],
    ['240.0.0.1', 'reserved or documentation'],
    ['2001:db8::1', 'reserved or documentation'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local, IPv4 in IPv6'],
    ['64:ff9b::7f00:1', 'loopback, IPv4 in IPv6'],
    ['::ffff:0:7f00:1', 'loopback, IPv4 in IPv6'],
    ['64:ff9b:1::a9fe:a9fe', 'NAT64 local-use'],
    ['::7f00:1', 'reserved or documentation'],
    ['2002:7f00:1::1', '6to4 relay'],
    ['2001::1', 'Teredo'],
  ])('%s is refused as %s', (address, range) => {
    expect(nonPublicRange(parseAddress(address))).toBe(range);
  });
});
