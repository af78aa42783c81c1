import { createHmac, timingSafeEqual } from 'node:crypto';
import { SIGNATURE_MAX } from '../workflows/payments/event-fields';

/** Default of PAYMENTS_WEBHOOK_TOLERANCE_SECONDS: the provider's own libraries accept 300 s either way. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type SignatureRefusalCode = 'SIGNATURE_MISSING' | 'SIGNATURE_MALFORMED' | 'SIGNATURE_MISMATCH' | 'TIMESTAMP_OUT_OF_TOLERANCE';

/** Why a delivery was refused; `code` is both the ingress's error code and the run's failure_type. */
export class SignatureRefusal extends Error {
  constructor(
    readonly code: SignatureRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'SignatureRefusal';
  }
}

export interface SignatureCheck {
  /** The request body exactly as received: the HMAC covers its bytes. */
  payload: string | Buffer;
  /** The `Stripe-Signature` (or `Webhook-Signature`) header value. */
  header: string | undefined;
  /** Candidate endpoint secrets; the index of the one that matched is returned. */
  secrets: readonly string[];
  toleranceSeconds: number;
  nowSeconds: number;
}

/** The v1 element: HMAC-SHA256 under the endpoint secret over `<t>.<payload>`. */
export function v1Signature(secret: string, timestamp: string | number, payload: string | Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest();
}

const TIMESTAMP = /^\d{1,12}$/;
const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

/**
 * The provider's published scheme: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 with the
 * endpoint secret over `<t>.<payload>`. Any v1 may match (the provider signs with both secrets
 * while one is rolled); other schemes (v0) are ignored. A signature is checked before the
 * timestamp, as the provider's libraries do, so a stale delivery is named only once it is genuine.
 * Throws a SignatureRefusal; returns the index in `secrets` of the secret that signed it.
 */
export function verifySignature(check: SignatureCheck): number {
  const header = check.header?.trim();
  if (!header) throw new SignatureRefusal('SIGNATURE_MISSING', 'the signature header is missing or empty');
  // The receive run takes the header as its input, bounded so: a longer one verified here would start a run that cannot.
  if (check.header!.length > SIGNATURE_MAX) {
    throw new SignatureRefusal('SIGNATURE_MALFORMED', `the signature header is ${check.header!.length} characters long; the limit is ${SIGNATURE_MAX}`);
  }
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (eq < 0) continue;
    if (key === 't') timestamp = value;
    if (key === 'v1' && HEX_SIGNATURE.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || !TIMESTAMP.test(timestamp)) {
    throw new SignatureRefusal('SIGNATURE_MALFORMED', 'the signature header has no t=<unix seconds> element');
  }
  if (!signatures.length) {
    throw new SignatureRefusal('SIGNATURE_MALFORMED', 'the signature header has no v1=<64 hex digits> element');
  }
  const payload = typeof check.payload === 'string' ? Buffer.from(check.payload, 'utf8') : check.payload;
  const matched = check.secrets.findIndex((secret) => {
    const expected = v1Signature(secret, timestamp, payload);
    // Every candidate is compared, so the time taken does not tell which one came close.
    return signatures.map((s) => timingSafeEqual(s, expected)).includes(true);
  });
  if (matched < 0) throw new SignatureRefusal('SIGNATURE_MISMATCH', 'no v1 signature matches the payload for the endpoint secret');
  if (Math.abs(check.nowSeconds - Number(timestamp)) > check.toleranceSeconds) {
    throw new SignatureRefusal(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `the signature timestamp is more than ${check.toleranceSeconds} s away from the current time`,
    );
  }
  return matched;
}
