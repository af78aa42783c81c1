import { EVENT_TEXT_MAX } from '../workflows/payments/event-fields';
import { findUnstorableText } from '../workflows/runtime/storable-text';

/** The fields payments.webhooks.receive reads out of a provider event, whatever its object. */
export interface NormalisedEvent {
  event_id: string;
  event_type: string;
  livemode: boolean;
  object_id: string | null;
  client_reference_id: string | null;
  customer_id: string | null;
  subscription_id: string | null;
  payment_status: string | null;
  event_metadata: Record<string, unknown>;
}

export class PayloadInvalid extends Error {
  readonly code = 'PAYLOAD_INVALID';
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** An id field the provider returns either as the id or, when expanded, as the object carrying it. */
const idOf = (v: unknown): string | null => text(v) ?? (isObject(v) ? text(v.id) : null);

type Reader = (o: Json) => Pick<NormalisedEvent, 'client_reference_id' | 'customer_id' | 'subscription_id' | 'payment_status'>;

/** Per object kind: where its customer, subscription and payment status are. */
const readers: Record<string, Reader> = {
  'checkout.session': (o) => ({
    client_reference_id: text(o.client_reference_id),
    customer_id: idOf(o.customer),
    subscription_id: idOf(o.subscription),
    payment_status: text(o.payment_status),
  }),
  // Current API versions put an invoice's subscription under parent.subscription_details; older ones at the top level.
  invoice: (o) => {
    const parent = isObject(o.parent) ? o.parent : {};
    const details = isObject(parent.subscription_details) ? parent.subscription_details : {};
    return {
      client_reference_id: null,
      customer_id: idOf(o.customer),
      subscription_id: idOf(details.subscription) ?? idOf(o.subscription),
      payment_status: text(o.status),
    };
  },
  subscription: (o) => ({ client_reference_id: null, customer_id: idOf(o.customer), subscription_id: text(o.id), payment_status: text(o.status) }),
  payment_intent: (o) => ({ client_reference_id: null, customer_id: idOf(o.customer), subscription_id: null, payment_status: text(o.status) }),
  charge: (o) => ({ client_reference_id: null, customer_id: idOf(o.customer), subscription_id: null, payment_status: text(o.status) }),
};

/** Parses a verified body as a provider event and reads its fields; anything not an event is PAYLOAD_INVALID. */
export function normaliseEvent(payload: string): NormalisedEvent {
  let event: unknown;
  try {
    event = JSON.parse(payload);
  } catch {
    throw new PayloadInvalid('the payload is not JSON');
  }
  if (!isObject(event)) throw new PayloadInvalid('the payload is not a JSON object');
  const id = text(event.id);
  const type = text(event.type);
  const object = isObject(event.data) ? event.data.object : undefined;
  if (!id || !type || !isObject(object)) throw new PayloadInvalid('the payload is not an event: id, type and data.object are required');
  // Own properties only: a kind such as `__proto__` or `constructor` names no reader.
  const kind = String(object.object);
  const reader = Object.hasOwn(readers, kind) ? readers[kind] : undefined;
  const empty = { client_reference_id: null, customer_id: null, subscription_id: null, payment_status: null };
  const normalised: NormalisedEvent = {
    event_id: id,
    event_type: type,
    livemode: event.livemode === true,
    object_id: text(object.id),
    ...(reader ? reader(object) : empty),
    event_metadata: isObject(object.metadata) ? object.metadata : {},
  };
  checkStorable(normalised);
  return normalised;
}

/**
 * The fields are stored (the event id in payment_events, all of them in the runs' data) and handed
 * to the grant: what Postgres or the grant's input would refuse is refused here, before the event is claimed.
 */
function checkStorable(event: NormalisedEvent): void {
  const unstorable = findUnstorableText(event);
  if (unstorable) throw new PayloadInvalid(`the event's ${unstorable.field} ${unstorable.message}`);
  for (const [field, value] of Object.entries(event)) {
    if (typeof value === 'string' && value.length > EVENT_TEXT_MAX) {
      throw new PayloadInvalid(`the event's ${field} is ${value.length} characters long; the limit is ${EVENT_TEXT_MAX}`);
    }
  }
}
