import type { Payload } from '@temporalio/common';
import { z } from 'zod';

/**
 * The remote codec protocol's body: a `temporal.api.common.v1.Payloads` message
 * in protobuf JSON, i.e. `{payloads: [{metadata: {key: base64}, data: base64}]}`.
 * Other fields a client may send alongside metadata and data are ignored.
 */
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$|^[A-Za-z0-9_-]*={0,2}$/, 'must be base64');
const payloadJson = z.looseObject({
  metadata: z.record(z.string(), base64).optional().nullable(),
  data: base64.optional().nullable(),
});
export const payloadsBody = z.strictObject({ payloads: z.array(payloadJson) });

export type PayloadJson = { metadata: Record<string, string>; data: string };

export type PayloadsBody = z.output<typeof payloadsBody>;

export function payloadsFromJson({ payloads }: PayloadsBody): Payload[] {
  return payloads.map((p) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data ?? '', 'base64'),
  }));
}

const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');

export function payloadsToJson(payloads: Payload[]): { payloads: PayloadJson[] } {
  return {
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
      data: b64(p.data),
    })),
  };
}
