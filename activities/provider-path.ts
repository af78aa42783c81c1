import { ApplicationFailure } from '@temporalio/common';

/**
 * "." and ".." in every spelling the URL parser takes for them ("%2e" in either case, WHATWG URL
 * "single-dot" and "double-dot" segments). Parsing removes such a segment together with the one
 * before it, so an id that is one sends the call to another resource than the one it names.
 */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The URL of a provider call: the API root, then a path built from percent-encoded ids. The input
 * schemas already refuse ids that could be dot segments; this holds for any path that reaches a
 * provider however it was built (a direct Temporal start, a future type), refusing the call for
 * good before anything is sent. Backslashes count as separators because the URL parser treats
 * them as "/" in http(s) URLs.
 */
export function providerUrl(root: string, path: string): string {
  const segments = path.split(/[?#]/, 1)[0].split(/[/\\]/);
  const dot = segments.find((segment) => DOT_SEGMENT.test(segment));
  if (dot !== undefined) {
    throw ApplicationFailure.nonRetryable(`not called: the path ${path} holds the dot segment "${dot}", which would move the call to another resource`, 'invalid_input');
  }
  return root.replace(/\/+$/, '') + path;
}
