import Stripe from 'stripe';

/**
 * Provider events shaped as the provider documents them (the Event object around a Checkout
 * Session, Invoice in both API-version shapes, Subscription, PaymentIntent, Charge), trimmed of
 * fields the engine does not read. Each call takes a fresh event id unless one is given.
 */
let counter = 0;
const nextId = (prefix: string) => `${prefix}_1Q${Date.now().toString(36)}${(counter++).toString(36).padStart(4, '0')}TEST`;

function envelope(type: string, object: Record<string, unknown>, apiVersion = '2025-08-27.basil', id = nextId('evt')) {
  return {
    id,
    object: 'event',
    api_version: apiVersion,
    created: 1763561590,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export function checkoutSession(type = 'checkout.session.completed', overrides: Record<string, unknown> = {}, eventId?: string) {
  return envelope(
    type,
    {
      id: nextId('cs_test'),
      object: 'checkout.session',
      amount_subtotal: 2000,
      amount_total: 2000,
      client_reference_id: 'user_42',
      currency: 'usd',
      customer: 'cus_TS6KX04w045BN9',
      customer_details: { email: 'jenny.rosen@example.com', name: 'Jenny Rosen' },
      livemode: false,
      metadata: { plan: 'pro' },
      mode: 'payment',
      payment_intent: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
      payment_status: 'paid',
      status: 'complete',
      subscription: null,
      success_url: 'https://example.com/success',
      ...overrides,
    },
    undefined,
    eventId,
  );
}

/** Current API versions (basil and later): the subscription is under parent.subscription_details. */
export function invoicePaidCurrent(overrides: Record<string, unknown> = {}) {
  return envelope('invoice.paid', {
    id: nextId('in'),
    object: 'invoice',
    amount_due: 2990,
    amount_paid: 2990,
    billing_reason: 'subscription_create',
    collection_method: 'charge_automatically',
    currency: 'usd',
    customer: 'cus_Q1b0Yi7UkcAh2A',
    customer_email: 'jenny.rosen@example.com',
    livemode: false,
    metadata: {},
    parent: {
      quote_details: null,
      subscription_details: { metadata: { plan: 'pro' }, subscription: 'sub_1SVC87HOQNg4XnOMbTgqJ0lK' },
      type: 'subscription_details',
    },
    status: 'paid',
    ...overrides,
  });
}

/** Older API versions: the subscription at the top level. */
export function invoicePaidLegacy(overrides: Record<string, unknown> = {}) {
  return envelope(
    'invoice.paid',
    {
      id: nextId('in'),
      object: 'invoice',
      amount_due: 70000,
      amount_paid: 70000,
      billing_reason: 'subscription_create',
      charge: 'ch_3PBXo5RxqlZt79sD1dVQwsQ1',
      currency: 'usd',
      customer: 'cus_Q1b0Yi7UkcAh2A',
      livemode: false,
      metadata: { order: '1001' },
      paid: true,
      status: 'paid',
      subscription: 'sub_1PBXo5RxqlZt79sDw8eYqk1B',
      ...overrides,
    },
    '2023-10-16',
  );
}

export function subscriptionEvent(type = 'customer.subscription.created') {
  return envelope(type, {
    id: nextId('sub'),
    object: 'subscription',
    customer: 'cus_Na6dX7aXxi11N4',
    items: { object: 'list', data: [] },
    livemode: false,
    metadata: { tier: 'gold' },
    status: 'active',
  });
}

export function paymentIntentEvent(type = 'payment_intent.succeeded') {
  return envelope(type, {
    id: nextId('pi'),
    object: 'payment_intent',
    amount: 2000,
    currency: 'usd',
    customer: { id: 'cus_NffrFeUfNV2Hib', object: 'customer' },
    livemode: false,
    metadata: { order_id: '6735' },
    status: 'succeeded',
  });
}

export function chargeEvent(type = 'charge.succeeded') {
  return envelope(type, {
    id: nextId('ch'),
    object: 'charge',
    amount: 1099,
    currency: 'usd',
    customer: null,
    livemode: false,
    metadata: {},
    paid: true,
    payment_intent: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
    status: 'succeeded',
  });
}

const stripe = new Stripe('sk_test_engine_tests_only');

/** The signature header the provider's own library makes; `timestamp` in unix seconds. */
export function sign(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/** A header carrying one v1 per secret, as the provider sends while an endpoint secret is rolled. */
export function signRotating(payload: string, secrets: string[], timestamp = Math.floor(Date.now() / 1000)): string {
  const v1 = secrets.map((secret) => sign(payload, secret, timestamp).split(',').find((p) => p.startsWith('v1='))!);
  return [`t=${timestamp}`, ...v1].join(',');
}
