import { type ConverterHint, defaultPayloadConverter, type Payload, type PayloadConverter, type SerializationContext } from '@temporalio/common';
import { decode } from '@temporalio/common/lib/encoding';
import { VERIFIED_ORGANIZATION, VERIFIED_ORGANIZATION_METADATA } from './runtime/organization-binding';

/**
 * The default payload converter, plus one thing: a value decoded from a payload
 * the worker's codec verified carries that organization under the
 * VERIFIED_ORGANIZATION symbol. It runs inside the workflow sandbox (the worker
 * bundles it through `payloadConverterPath`), the only way a workflow can learn
 * what the codec proved about its input.
 */
class VerifiedOrganizationConverter implements PayloadConverter {
  toPayload<T>(value: T, context?: SerializationContext, hint?: ConverterHint<T>): Payload {
    return defaultPayloadConverter.toPayload(value, context, hint);
  }

  fromPayload<T>(payload: Payload, context?: SerializationContext, hint?: ConverterHint<T>): T {
    const value = defaultPayloadConverter.fromPayload<T>(payload, context, hint);
    const verified = payload.metadata?.[VERIFIED_ORGANIZATION_METADATA];
    if (verified && value !== null && typeof value === 'object' && Object.isExtensible(value)) {
      Object.defineProperty(value, VERIFIED_ORGANIZATION, { value: decode(verified), enumerable: false });
    }
    return value;
  }
}

export const payloadConverter: PayloadConverter = new VerifiedOrganizationConverter();
