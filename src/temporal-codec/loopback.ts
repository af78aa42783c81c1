import ipaddr from 'ipaddr.js';

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms, as a socket reports them. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}
