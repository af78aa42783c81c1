import { Body, Controller, Headers, HttpCode, Inject, Post, UseGuards, UsePipes } from '@nestjs/common';
import type { Payload } from '@temporalio/common';
import { claimedOwner, isEncryptedPayload, openPayload, PayloadDecryptionError, sealPayload } from '../../activities/payload-codec';
import type { PayloadKeys } from '../../activities/payload-keys';
import { Public } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { LOGGER, TEMPORAL_CLIENTS } from '../common/di';
import type { Logger } from '../logger';
import { SchemaValidationPipe } from '../common/validation';
import type { TemporalClients } from '../temporal-clients';
import { type CodecCaller, CodecCallerGuard, CurrentCodecCaller } from './codec-caller.guard';
import { type PayloadsBody, payloadsBody, payloadsFromJson, payloadsToJson } from './payload-json';

/**
 * Temporal's remote codec protocol (what the Temporal UI and `temporal --codec-endpoint`
 * call): POST {endpoint}/decode and {endpoint}/encode with a Payloads message as
 * protobuf JSON, answered in the same shape. Callers are authenticated by
 * CodecCallerGuard (TEMPORAL_CODEC_AUTH), not the API's global token guard; CORS for
 * the UI is in the module.
 *
 * Decoding is per organization: a member's token decodes its own organization's
 * payloads; any other payload (another organization's, or a platform payload) comes
 * back unchanged, still encrypted, as it would from a codec without the key.
 * Members of the operator organizations (TEMPORAL_CODEC_ORGANIZATIONS) decode every
 * payload, and so do the local UI (loopback) and SSO callers (jwt). Encoding is always
 * under the caller's own organization, so it needs an org-member token.
 */
@Controller('temporal-codec')
@Public()
@UseGuards(CodecCallerGuard)
@UsePipes(SchemaValidationPipe)
export class TemporalCodecController {
  private readonly keys: PayloadKeys;

  constructor(
    @Inject(TEMPORAL_CLIENTS) temporal: TemporalClients,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.keys = temporal.keys;
  }

  @Post('decode')
  @HttpCode(200)
  async decode(
    @CurrentCodecCaller() caller: CodecCaller,
    @Body({ schema: payloadsBody }) body: PayloadsBody,
    @Headers('x-namespace') namespace?: string,
  ) {
    const { operator } = caller;
    const payloads = payloadsFromJson(body);
    let withheld = 0;
    const decoded = payloads.map((payload, index) =>
      this.perPayload(index, 'decode', () => {
        if (!isEncryptedPayload(payload)) return payload;
        if (!operator && claimedOwner(payload) !== caller.organization_uuid) {
          withheld += 1;
          return payload;
        }
        return openPayload(this.keys, payload).payload;
      }),
    );
    // An audit line: who read decrypted payloads (never what they were).
    this.log.info(
      { organization_uuid: caller.organization_uuid, subject: caller.subject, via: caller.via, namespace, payloads: payloads.length, withheld, operator },
      'temporal payloads decoded',
    );
    return payloadsToJson(decoded);
  }

  @Post('encode')
  @HttpCode(200)
  async encode(@CurrentCodecCaller() caller: CodecCaller, @Body({ schema: payloadsBody }) body: PayloadsBody) {
    const organization = caller.organization_uuid;
    if (organization === null) {
      throw new ApiError(403, 'encode_needs_organization', `encode seals payloads under the caller's organization; a ${caller.via} caller has none: use an org-member bearer token`, null);
    }
    const payloads = payloadsFromJson(body);
    return payloadsToJson(payloads.map((p, index) => this.perPayload(index, 'encode', () => sealPayload(this.keys, organization, p))));
  }

  /** An error names the payload it is about, never its content. */
  private perPayload(index: number, direction: 'encode' | 'decode', work: () => Payload): Payload {
    try {
      return work();
    } catch (err) {
      if (err instanceof PayloadDecryptionError) {
        throw new ApiError(400, 'payload_decode_failed', `payloads[${index}]: ${err.message}`, { index, reason: err.reason });
      }
      throw new ApiError(400, `payload_${direction}_failed`, `payloads[${index}] could not be ${direction}d`, { index });
    }
  }
}
