import { WorkflowEngine } from '@workflow-engine/sdk';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { stackEnv, uniqueId } from './api';

export const DELETE = 'esign.authorizations.delete-user-authorization';
export const RESOURCES = 'esign.resources.get-resource-information';

export const engineFor = (token = stackEnv.tokenA, options: Partial<ConstructorParameters<typeof WorkflowEngine>[0]> = {}) =>
  new WorkflowEngine({ baseUrl: stackEnv.apiUrl, token, ...options });

/** A delete against the loopback e-signature double; the behaviour prefix picks its answers (test/doubles/esign-double.ts). */
export const deleteInput = (behaviour: string) => ({
  base_url: stackEnv.esignUrl,
  api_token: ESIGN_VALID_TOKEN,
  accountid: '4711',
  userid: uniqueId('user'),
  authorizationid: uniqueId(behaviour),
});

/**
 * A fetch that cuts the first stream connection right after its first `transition` event
 * (an error mid-body, as a dropped connection gives) and records the Last-Event-ID of each
 * stream request.
 */
export function cuttingFetch() {
  const lastEventIds: Array<string | null> = [];
  let cut = false;
  const fetchImpl: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = String(input);
    if (!url.endsWith('/stream')) return res;
    lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
    if (cut || !res.body) return res;
    cut = true;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += decoder.decode(value, { stream: true });
        const transition = /(^|\n)event: ?transition\r?\n/.exec(seen);
        const end = transition ? /\r?\n\r?\n/.exec(seen.slice(transition.index + 1)) : null;
        if (transition && end) {
          controller.enqueue(new TextEncoder().encode(seen.slice(0, transition.index + 1 + end.index + end[0].length)));
          void reader.cancel();
          controller.error(new TypeError('terminated: the test cut the connection'));
          return;
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetchImpl, lastEventIds };
}
