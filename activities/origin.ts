/**
 * Where a credential may go is an origin (scheme, host, port). Two spellings of one
 * origin must compare equal (case, default port, IPv4 and IPv6 forms are normalised by
 * the WHATWG URL parser; a trailing dot names the same DNS host), and anything that does
 * not parse is no origin at all, so it matches nothing.
 */
export function originOf(url: string | undefined): string | undefined {
  if (!url || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  parsed.hostname = parsed.hostname.replace(/\.$/, '');
  return parsed.origin;
}

export function sameOrigin(a: string | undefined, b: string | undefined): boolean {
  const left = originOf(a);
  return left !== undefined && left === originOf(b);
}
