import type { Dispatcher } from 'undici';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createOutboundDispatcher, type Resolve } from '../../activities/outbound-dispatcher';

/**
 * The loopback address test files' own providers listen on (any port): a test file starts its
 * provider after the stack, so the stack cannot list its port. 127.0.0.1 stays limited to the
 * doubles' ports, so every other port on it is refused.
 */
export const TEST_PROVIDER_HOST = '127.0.0.2';

/** The OUTBOUND_ALLOW value that lets provider calls reach exactly these loopback doubles (host:port each). */
export function outboundAllowFor(...urls: string[]): string {
  return urls.map((url) => new URL(url).host).join(',');
}

/** A provider-call dispatcher that may reach exactly these doubles, and nothing else that is not public. */
export function dispatcherFor(urls: string[], resolve?: Resolve): Dispatcher {
  return createOutboundDispatcher({ allow: parseOutboundAllow(outboundAllowFor(...urls)), resolve });
}
