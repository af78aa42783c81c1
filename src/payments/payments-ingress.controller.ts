import { Controller, Headers, HttpCode, Param, Post, Req, Res, UsePipes } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { PaymentsIngressService } from './payments-ingress.service';
import type { RawBodyRequest } from '../common/raw-body';
import { IngressLimiter } from '../limits/ingress-limiter';
import { RequestLimit } from '../limits/request-limit';

/** The provider's endpoint for an organization's payments connection: authenticated by the signature alone. */
@Controller('hooks/payments')
@UsePipes(StorableTextPipe)
export class PaymentsIngressController {
  constructor(
    private readonly ingress: PaymentsIngressService,
    private readonly limiter: IngressLimiter,
  ) {}

  @Public()
  @Post(':connection_uuid')
  @RequestLimit('signed-ingress')
  @HttpCode(202)
  async receive(
    @Param('connection_uuid') connectionUuid: string,
    @Headers('stripe-signature') stripeSignature: string | undefined,
    @Headers('webhook-signature') webhookSignature: string | undefined,
    @Req() req: RawBodyRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const answer = await this.ingress.receive(connectionUuid, req.rawBody ?? Buffer.alloc(0), stripeSignature ?? webhookSignature, {
      verified: () => this.limiter.verified(connectionUuid, res),
      refused: () => this.limiter.refused(req, res),
    });
    res.status(answer.status);
    return answer.body;
  }
}
