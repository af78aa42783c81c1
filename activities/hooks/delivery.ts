import { type Dispatcher, fetch } from 'undici';
import { v1Signature } from '../payments-signature';
import { callSignal, fetchFailure } from '../provider-http';

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

/** `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, the scheme payment providers sign webhooks with (verifySignature checks it). */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${v1Signature(secret, unixSeconds, body).toString('hex')}`;
}

/**
 * POSTs a body, signed, and reports what came back. Redirects are not followed (a 3xx is the
 * answer), the answer's body is never read (so its size cannot matter), and an error's text is
 * kept without the URL's query, which may carry the receiver's own token. The activity's
 * cancellation is thrown, not reported: a cancelled delivery is no attempt of the target's.
 */
export async function deliverSigned(
  config: DeliveryHttpConfig,
  request: { url: string; body: string; contentType: string; secret: string; eventUuid: string },
): Promise<DeliveryOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
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
      signal: callSignal(config.timeoutMs),
      dispatcher: config.dispatcher,
    });
    await res.body?.cancel().catch(() => undefined);
    return { status_code: res.status, latency_ms: latency() };
  } catch (err) {
    const { kind, detail } = fetchFailure(err);
    if (kind === 'outbound_policy') return { status_code: null, latency_ms: latency(), error: detail, refused: true };
    const error = kind === 'timeout' ? `no answer within ${config.timeoutMs} ms` : `unreachable: ${detail}`;
    return { status_code: null, latency_ms: latency(), error };
  }
}
