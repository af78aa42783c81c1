import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { Public } from '../auth/principal';
import type { RawBodyRequest } from '../common/raw-body';
import { IngressService } from './ingress.service';
import { RequestLimit } from '../limits/request-limit';

/** Public: whoever knows an endpoint's unguessable id may post to it, as webhook senders do. */
@Controller('hooks/r')
export class IngressController {
  constructor(private readonly ingress: IngressService) {}

  @Public()
  @Post(':endpoint_uuid')
  @RequestLimit('ingress')
  @HttpCode(202)
  receive(@Param('endpoint_uuid') endpointUuid: string, @Req() req: RawBodyRequest) {
    return this.ingress.receive(endpointUuid, req.rawBody ?? Buffer.alloc(0), req.headers);
  }
}
