import { Body, Controller, Headers, HttpCode, Inject, Post, UsePipes } from '@nestjs/common';
import type { Client } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { PayloadDecryptionError } from '../../activities/payload-codec';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { ApiError } from '../common/api-error';
import { CONFIG, LOGGER, TEMPORAL_CLIENT } from '../common/di';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import { SchemaValidationPipe } from '../common/validation';
import { type PayloadsBody, payloadsBody, payloadsFromJson, payloadsToJson } from './payload-json';

/**
 * Temporal's remote codec protocol (what the Temporal UI and `temporal --codec-endpoint`
 * call): POST {endpoint}/decode and {endpoint}/encode with a Payloads message as
 * protobuf JSON, answered in the same shape. It applies exactly the codecs the
 * API's own Temporal client uses, so it decodes what the service encrypts.
 * Org-member bearer auth, like every /api route; CORS for the UI is in the module.
 */
@Controller('temporal-codec')
@UsePipes(SchemaValidationPipe)
export class TemporalCodecController {
  private readonly codecs: PayloadCodec[];

  constructor(
    @Inject(TEMPORAL_CLIENT) temporal: Client,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.codecs = temporal.options.loadedDataConverter.payloadCodecs;
  }

  @Post('decode')
  @HttpCode(200)
  async decode(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: payloadsBody }) body: PayloadsBody,
    @Headers('x-namespace') namespace?: string,
  ) {
    this.authorize(principal);
    const payloads = payloadsFromJson(body);
    const decoded = await this.apply(payloads, 'decode');
    // An audit line: who read decrypted payloads (never what they were).
    this.log.info(
      { organization_uuid: principal.organization_uuid, user_id: principal.user_id, namespace, payloads: payloads.length },
      'temporal payloads decoded',
    );
    return payloadsToJson(decoded);
  }

  @Post('encode')
  @HttpCode(200)
  async encode(@CurrentPrincipal() principal: Principal, @Body({ schema: payloadsBody }) body: PayloadsBody) {
    this.authorize(principal);
    return payloadsToJson(await this.apply(payloadsFromJson(body), 'encode'));
  }

  /**
   * One key encrypts every organization's payloads, so decoding is a
   * platform power: TEMPORAL_CODEC_ORGANIZATIONS names who holds it.
   */
  private authorize(principal: Principal) {
    const allowed = this.config.codecOrganizations;
    if (allowed.length && !allowed.includes(principal.organization_uuid)) {
      throw new ApiError(403, 'codec_forbidden', 'this organization may not use the codec endpoint (TEMPORAL_CODEC_ORGANIZATIONS)');
    }
  }

  /** One payload at a time, so an error names the payload; decoding runs the codecs in reverse, as the SDK does. */
  private async apply(payloads: Payload[], direction: 'encode' | 'decode'): Promise<Payload[]> {
    const chain = direction === 'decode' ? [...this.codecs].reverse() : this.codecs;
    const out: Payload[] = [];
    for (const [index, payload] of payloads.entries()) {
      let current = [payload];
      try {
        for (const codec of chain) current = await codec[direction](current);
      } catch (err) {
        if (err instanceof PayloadDecryptionError) {
          throw new ApiError(400, 'payload_decode_failed', `payloads[${index}]: ${err.message}`, { index, reason: err.reason });
        }
        throw new ApiError(400, `payload_${direction}_failed`, `payloads[${index}] could not be ${direction}d`, { index });
      }
      out.push(...current);
    }
    return out;
  }
}
