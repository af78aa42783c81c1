import { createHmac } from 'node:crypto';
import { type Dispatcher, fetch } from 'undici';

export interface DeliveryHttpConfig {
  /** From createOutboundDispatcher: the outbound policy is enforced on the address each connection uses. */
  dispatcher: Dispatcher;
  /** Bounds the whole exchange: connecting, sending and the answer's headers. */
  timeoutMs: number;
}

export interface DeliveryOutcome {
  status_code: number | null;
  latency_ms: number;
  error?: string;
  /** The outbound policy refused the connection: no retry can change that. */
  refused?: boolean;
}

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, the scheme payment providers sign webhooks with. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/**
 * POSTs a body, signed, and reports what came back. Redirects are not followed (a 3xx is the
 * answer), the answer's body is never read (so its size cannot matter), and an error's text is
 * kept without the URL's query, which may carry the receiver's own token.
 */
export async function deliverSigned(
  config: DeliveryHttpConfig,
  request: { url: string; body: string; contentType: string; secret: string; eventUuid: string; signal?: AbortSignal },
): Promise<DeliveryOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const timeout = AbortSignal.timeout(config.timeoutMs);
  try {
    const res = await fetch(request.url, {
      method: 'POST',
      body: request.body,
      headers: {
        'content-type': request.contentType,
        'webhook-id': request.eventUuid,
        'webhook-signature': signatureHeader(request.secret, request.body, Math.floor(Date.now() / 1000)),
        'user-agent': 'workflow-engine-hooks/1',
      },
      redirect: 'manual',
      signal: request.signal ? AbortSignal.any([timeout, request.signal]) : timeout,
      dispatcher: config.dispatcher,
    });
    await res.body?.cancel().catch(() => undefined);
    return { status_code: res.status, latency_ms: latency() };
  } catch (err) {
    const cause = (err as { cause?: { name?: unknown; message?: unknown } })?.cause;
    if (cause?.name === 'OutboundPolicyError') return { status_code: null, latency_ms: latency(), error: String(cause.message), refused: true };
    const name = (err as { name?: unknown })?.name;
    const error =
      name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${config.timeoutMs} ms`
        : `unreachable: ${String(cause?.message ?? (err as Error)?.message)}`;
    return { status_code: null, latency_ms: latency(), error };
  }
}
