import { Body, Controller, Headers, HttpCode, Inject, Post, UsePipes } from '@nestjs/common';
import type { Payload } from '@temporalio/common';
import { claimedOwner, isEncryptedPayload, openPayload, PayloadDecryptionError, sealPayload } from '../../activities/payload-codec';
import type { PayloadKeys } from '../../activities/payload-keys';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { CONFIG, LOGGER, TEMPORAL_CLIENTS } from '../common/di';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import { SchemaValidationPipe } from '../common/validation';
import type { TemporalClients } from '../temporal-clients';
import { type PayloadsBody, payloadsBody, payloadsFromJson, payloadsToJson } from './payload-json';

/**
 * Temporal's remote codec protocol (what the Temporal UI and `temporal --codec-endpoint`
 * call): POST {endpoint}/decode and {endpoint}/encode with a Payloads message as
 * protobuf JSON, answered in the same shape. Org-member bearer auth, like every
 * /api route; CORS for the UI is in the module.
 *
 * Decoding is per organization: a member's token decodes its own organization's
 * payloads; any other payload (another organization's, or a platform payload) comes
 * back unchanged, still encrypted, as it would from a codec without the key.
 * Members of the operator organizations (TEMPORAL_CODEC_ORGANIZATIONS) decode every
 * payload. Encoding is always under the caller's own organization.
 */
@Controller('temporal-codec')
@UsePipes(SchemaValidationPipe)
export class TemporalCodecController {
  private readonly keys: PayloadKeys;

  constructor(
    @Inject(TEMPORAL_CLIENTS) temporal: TemporalClients,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.keys = temporal.keys;
  }

  @Post('decode')
  @HttpCode(200)
  async decode(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: payloadsBody }) body: PayloadsBody,
    @Headers('x-namespace') namespace?: string,
  ) {
    const operator = this.config.codecOrganizations.includes(principal.organization_uuid);
    const payloads = payloadsFromJson(body);
    let withheld = 0;
    const decoded = payloads.map((payload, index) =>
      this.perPayload(index, 'decode', () => {
        if (!isEncryptedPayload(payload)) return payload;
        if (!operator && claimedOwner(payload) !== principal.organization_uuid) {
          withheld += 1;
          return payload;
        }
        return openPayload(this.keys, payload).payload;
      }),
    );
    // An audit line: who read decrypted payloads (never what they were).
    this.log.info(
      { organization_uuid: principal.organization_uuid, user_id: principal.user_id, namespace, payloads: payloads.length, withheld, operator },
      'temporal payloads decoded',
    );
    return payloadsToJson(decoded);
  }

  @Post('encode')
  @HttpCode(200)
  async encode(@CurrentPrincipal() principal: Principal, @Body({ schema: payloadsBody }) body: PayloadsBody) {
    const payloads = payloadsFromJson(body);
    return payloadsToJson(payloads.map((p, index) => this.perPayload(index, 'encode', () => sealPayload(this.keys, principal.organization_uuid, p))));
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
