import { Controller, Headers, HttpCode, Param, Post, Req, Res, UsePipes } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { PaymentsIngressService } from './payments-ingress.service';
import type { RawBodyRequest } from '../common/raw-body';
import { RequestLimit } from '../limits/request-limit';

/** The provider's endpoint for an organization's payments connection: authenticated by the signature alone. */
@Controller('hooks/payments')
@UsePipes(StorableTextPipe)
export class PaymentsIngressController {
  constructor(private readonly ingress: PaymentsIngressService) {}

  @Public()
  @Post(':connection_uuid')
  @RequestLimit('ingress')
  @HttpCode(202)
  async receive(
    @Param('connection_uuid') connectionUuid: string,
    @Headers('stripe-signature') stripeSignature: string | undefined,
    @Headers('webhook-signature') webhookSignature: string | undefined,
    @Req() req: RawBodyRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const answer = await this.ingress.receive(connectionUuid, req.rawBody ?? Buffer.alloc(0), stripeSignature ?? webhookSignature);
    res.status(answer.status);
    return answer.body;
  }
}
