import type { SignatureRefusal } from '../../activities/payments-signature';
import { ApiError } from '../common/api-error';

/**
 * The 400 for a delivery whose provider signature does not verify, the same at every ingress that
 * checks one: the refusal's code, the header named (the provider's name for it; Webhook-Signature
 * is accepted too), and why this ingress wanted it when that is not obvious.
 */
export function signatureRefused(err: SignatureRefusal, why?: string): ApiError {
  const message = why ? `${err.message}: ${why}` : err.message;
  return new ApiError(400, err.code, `Stripe-Signature (or Webhook-Signature): ${message}`, [
    { field: 'header.stripe-signature', rule: err.code.toLowerCase(), message },
  ]);
}
