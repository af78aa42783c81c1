import Stripe from 'stripe';
import { normaliseEvent, PayloadInvalid } from '../../activities/payments-events';
import { SignatureRefusal, verifySignature } from '../../activities/payments-signature';
import { GRANT_ON_PAYMENT, routeFor } from '../../workflows/payments-webhooks-receive';
import {
  chargeEvent,
  checkoutSession,
  invoicePaidCurrent,
  invoicePaidLegacy,
  paymentIntentEvent,
  sign,
  signRotating,
  subscriptionEvent,
} from '../support/payments-events';

const SECRET = 'whsec_test_8f3a2c91b7d4e6f0';
const OLD_SECRET = 'whsec_test_old_5b1e9d7c3a';
const now = Math.floor(Date.now() / 1000);

function refusal(check: () => unknown): string {
  try {
    check();
  } catch (err) {
    if (err instanceof SignatureRefusal) return err.code;
    throw err;
  }
  throw new Error('accepted');
}

const verify = (payload: string | Buffer, header: string | undefined, secrets = [SECRET], at = now, toleranceSeconds = 300) =>
  verifySignature({ payload, header, secrets, toleranceSeconds, nowSeconds: at });

describe('verifySignature against the provider library', () => {
  const payload = JSON.stringify(checkoutSession());

  it('accepts what the provider library signs, as a string or as the raw bytes', () => {
    expect(verify(payload, sign(payload, SECRET))).toBe(0);
    expect(verify(Buffer.from(payload), sign(payload, SECRET))).toBe(0);
  });

  it('agrees with the provider library: what it verifies we verify, what it refuses we refuse', () => {
    const stripe = new Stripe('sk_test_engine_tests_only');
    const header = sign(payload, SECRET);
    expect(() => stripe.webhooks.constructEvent(payload, header, SECRET)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(payload + ' ', header, SECRET)).toThrow();
    expect(refusal(() => verify(payload + ' ', header))).toBe('SIGNATURE_MISMATCH');
  });

  it('refuses a missing or empty header: SIGNATURE_MISSING', () => {
    expect(refusal(() => verify(payload, undefined))).toBe('SIGNATURE_MISSING');
    expect(refusal(() => verify(payload, '  '))).toBe('SIGNATURE_MISSING');
  });

  it('refuses a header longer than the receive run takes (8192), however well it verifies: SIGNATURE_MALFORMED', () => {
    const header = `${sign(payload, SECRET)},x=${'a'.repeat(8300)}`;
    expect(new Stripe('sk_test_engine_tests_only').webhooks.constructEvent(payload, header, SECRET)).toBeTruthy();
    expect(refusal(() => verify(payload, header))).toBe('SIGNATURE_MALFORMED');
    const longest = `${sign(payload, SECRET)},x=`;
    expect(verify(payload, longest + 'a'.repeat(8192 - longest.length))).toBe(0);
  });

  it('refuses a header without t or without a v1: SIGNATURE_MALFORMED', () => {
    const v1 = sign(payload, SECRET).split(',')[1];
    expect(refusal(() => verify(payload, v1))).toBe('SIGNATURE_MALFORMED');
    expect(refusal(() => verify(payload, `t=${now}`))).toBe('SIGNATURE_MALFORMED');
    expect(refusal(() => verify(payload, `t=soon,${v1}`))).toBe('SIGNATURE_MALFORMED');
    expect(refusal(() => verify(payload, 'garbage'))).toBe('SIGNATURE_MALFORMED');
  });

  it('ignores other schemes: a v0 alone is malformed, a v0 beside a good v1 is harmless', () => {
    const good = sign(payload, SECRET);
    const v0 = `v0=${'0'.repeat(64)}`;
    expect(refusal(() => verify(payload, `t=${now},${v0}`))).toBe('SIGNATURE_MALFORMED');
    expect(verify(payload, `${good},${v0}`)).toBe(0);
  });

  it('refuses a tampered body, a wrong secret, a changed timestamp: SIGNATURE_MISMATCH', () => {
    const header = sign(payload, SECRET);
    expect(refusal(() => verify(payload.replace('user_42', 'user_43'), header))).toBe('SIGNATURE_MISMATCH');
    expect(refusal(() => verify(payload, sign(payload, 'whsec_someone_else')))).toBe('SIGNATURE_MISMATCH');
    expect(refusal(() => verify(payload, header.replace(/^t=\d+/, `t=${now - 1}`)))).toBe('SIGNATURE_MISMATCH');
  });

  it('accepts any matching v1 (rotation), with the secret that matched', () => {
    const header = signRotating(payload, [OLD_SECRET, SECRET]);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verify(payload, header, [SECRET])).toBe(0);
    expect(verify(payload, header, [OLD_SECRET])).toBe(0);
    expect(verify(payload, sign(payload, SECRET), ['whsec_unrelated_1', SECRET])).toBe(1);
  });

  it('refuses timestamps past the tolerance either way, and the tolerance is configurable', () => {
    expect(refusal(() => verify(payload, sign(payload, SECRET, now - 301)))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(refusal(() => verify(payload, sign(payload, SECRET, now + 301)))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(verify(payload, sign(payload, SECRET, now - 299))).toBe(0);
    expect(verify(payload, sign(payload, SECRET, now - 3000), [SECRET], now, 3600)).toBe(0);
    expect(refusal(() => verify(payload, sign(payload, SECRET, now - 61), [SECRET], now, 60))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it('names a forged stale delivery a mismatch, not stale', () => {
    expect(refusal(() => verify(payload, sign(payload, 'whsec_forger_key', now - 10_000)))).toBe('SIGNATURE_MISMATCH');
  });
});

describe('normaliseEvent and the route table', () => {
  const normalise = (event: object) => normaliseEvent(JSON.stringify(event));
  const route = (event: object) => {
    const n = normalise(event);
    return routeFor(n.event_type, n.payment_status);
  };

  it('reads a checkout session', () => {
    const event = checkoutSession();
    expect(normalise(event)).toEqual({
      event_id: event.id,
      event_type: 'checkout.session.completed',
      livemode: false,
      object_id: (event.data.object as { id: string }).id,
      client_reference_id: 'user_42',
      customer_id: 'cus_TS6KX04w045BN9',
      subscription_id: null,
      payment_status: 'paid',
      event_metadata: { plan: 'pro' },
    });
  });

  it('reads an invoice in the current shape (parent.subscription_details) and the older one (top-level subscription)', () => {
    const current = normalise(invoicePaidCurrent());
    expect(current).toMatchObject({ subscription_id: 'sub_1SVC87HOQNg4XnOMbTgqJ0lK', customer_id: 'cus_Q1b0Yi7UkcAh2A', payment_status: 'paid' });
    const legacy = normalise(invoicePaidLegacy());
    expect(legacy).toMatchObject({ subscription_id: 'sub_1PBXo5RxqlZt79sDw8eYqk1B', customer_id: 'cus_Q1b0Yi7UkcAh2A', event_metadata: { order: '1001' } });
  });

  it('reads subscriptions, payment intents (expanded customer) and charges', () => {
    expect(normalise(subscriptionEvent())).toMatchObject({ customer_id: 'cus_Na6dX7aXxi11N4', payment_status: 'active', event_metadata: { tier: 'gold' } });
    const sub = subscriptionEvent();
    expect(normalise(sub).subscription_id).toBe((sub.data.object as { id: string }).id);
    expect(normalise(paymentIntentEvent())).toMatchObject({ customer_id: 'cus_NffrFeUfNV2Hib', payment_status: 'succeeded', event_metadata: { order_id: '6735' } });
    expect(normalise(chargeEvent())).toMatchObject({ customer_id: null, payment_status: 'succeeded', subscription_id: null });
  });

  it('routes paid checkouts, async successes and paid invoices to the grant; nothing else', () => {
    expect(route(checkoutSession())).toBe(GRANT_ON_PAYMENT);
    expect(route(checkoutSession('checkout.session.completed', { payment_status: 'unpaid' }))).toBeNull();
    expect(route(checkoutSession('checkout.session.async_payment_succeeded'))).toBe(GRANT_ON_PAYMENT);
    expect(route(checkoutSession('checkout.session.async_payment_failed', { payment_status: 'unpaid' }))).toBeNull();
    expect(route(invoicePaidCurrent())).toBe(GRANT_ON_PAYMENT);
    expect(route(invoicePaidLegacy())).toBe(GRANT_ON_PAYMENT);
    expect(route(subscriptionEvent())).toBeNull();
    expect(route(paymentIntentEvent())).toBeNull();
    expect(route(chargeEvent())).toBeNull();
  });

  it('reads an object kind naming an Object.prototype member (__proto__, constructor, toString) as an unknown kind', () => {
    for (const kind of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const event = chargeEvent();
      const object = { ...(event.data.object as object), object: kind, event_id: 'evt_forged', livemode: true };
      expect(normalise({ ...event, data: { object } })).toEqual({
        event_id: event.id,
        event_type: event.type,
        livemode: false,
        object_id: (event.data.object as { id: string }).id,
        client_reference_id: null,
        customer_id: null,
        subscription_id: null,
        payment_status: null,
        event_metadata: (event.data.object as { metadata: object }).metadata,
      });
    }
  });

  it('refuses fields Postgres cannot store or the grant cannot take: PAYLOAD_INVALID naming the field', () => {
    const refusal = (body: string) => {
      try {
        normaliseEvent(body);
      } catch (err) {
        if (err instanceof PayloadInvalid) return err.message;
        throw err;
      }
      throw new Error('accepted');
    };
    const event = checkoutSession();
    expect(refusal(JSON.stringify(event).replace(event.id, 'evt_\\u0000x'))).toMatch(/event_id must not contain the NUL character/);
    expect(refusal(JSON.stringify(checkoutSession(undefined, { metadata: { plan: 'p\u0000' } })))).toMatch(/event_metadata\.plan must not contain the NUL/);
    expect(refusal(JSON.stringify(checkoutSession(undefined, { customer: 'cus_\ud800' })))).toMatch(/customer_id must be well-formed Unicode/);
    expect(refusal(JSON.stringify(checkoutSession(undefined, {}, `evt_${'a'.repeat(296)}`)))).toMatch(/event_id is 300 characters long; the limit is 255/);
    expect(refusal(JSON.stringify(checkoutSession(undefined, { client_reference_id: 'u'.repeat(256) })))).toMatch(/client_reference_id is 256 characters/);
    expect(normalise(checkoutSession(undefined, {}, `evt_${'a'.repeat(251)}`)).event_id).toHaveLength(255);
  });

  it('refuses what is not an event: PAYLOAD_INVALID', () => {
    for (const body of ['not json', '[]', '"evt"', '{"id":"evt_1","type":"x"}', '{"id":"evt_1","data":{"object":{}}}']) {
      expect(() => normaliseEvent(body)).toThrow(PayloadInvalid);
    }
  });
});
