import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res, UsePipes } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AllowEndUsers, CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type ListQuery, listQuerySchema } from './run-list';
import { DatabaseCheck } from './database-check';
import { RunStreamService } from './run-stream.service';
import { RunsService } from './runs.service';
import { type StartBody, startBodySchema } from './start-body';
import { RequestLimit } from '../limits/request-limit';

@Controller('workflows')
// End users start exposed types and read their own runs only (RunsService).
@AllowEndUsers()
// The text check first: a NUL or a lone surrogate is named as such whatever else the schema finds.
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly streams: RunStreamService,
    private readonly databaseCheck: DatabaseCheck,
  ) {}

  @Post('start')
  @RequestLimit('start')
  async start(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: startBodySchema }) body: StartBody,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { result, replayed } = await this.runs.start(principal, body, idempotencyKey, this.databaseCheck.forRequest(req));
    res.status(201);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return result;
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query({ schema: listQuerySchema }) query: ListQuery) {
    return this.runs.list(principal, query);
  }

  @Get(':id')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.get(id, principal);
  }

  @Get(':id/history')
  history(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.history(id, principal);
  }

  @Get(':id/stream')
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    await this.streams.stream(id, principal, req, res);
  }

  @Post(':id/cancel')
  @HttpCode(202)
  cancel(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.cancel(id, principal);
  }

  @Post(':id/retry')
  @RequestLimit('start')
  @HttpCode(200)
  retry(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.retry(id, principal);
  }
}
