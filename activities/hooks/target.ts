import { sameOrigin } from '../origin';
import { literalAddressProblem, outboundUrlProblem } from '../outbound';
import type { OutboundAllowList } from '../outbound-allow';

export interface TargetPolicy {
  allowHttpHosts: readonly string[];
  outboundAllow: OutboundAllowList;
  /** The API's own public base URL: a target there would feed the ingress its own deliveries. */
  publicApiUrl: string;
}

/**
 * Why a target_url is refused before anything is stored, or undefined: https unless the host is
 * in ALLOW_HTTP_HOSTS, no credentials, no non-public address literal (any spelling the URL parser
 * normalises: decimal, octal, IPv4-mapped IPv6) outside OUTBOUND_ALLOW, not this service itself.
 * What a host name resolves to is checked by the worker on the address it connects to.
 */
export function targetUrlProblem(url: string, policy: TargetPolicy): string | undefined {
  if (sameOrigin(url, policy.publicApiUrl)) return 'must not point at this service';
  return outboundUrlProblem(url, policy.allowHttpHosts) ?? literalAddressProblem(url, policy.outboundAllow);
}

/** ALLOW_HTTP_HOSTS let this target use plain http: worth a warning to whoever created it. */
export const plainHttp = (url: string) => URL.canParse(url) && new URL(url).protocol === 'http:';
