import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type CreateEndpointBody, createEndpointBody, type ListEventsQuery, listEventsQuery } from './hooks.schemas';
import { HooksService } from './hooks.service';

@Controller('hooks')
// The text check first: a NUL or a lone surrogate is named as such whatever else the schema finds.
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class HooksController {
  constructor(private readonly hooks: HooksService) {}

  @Post('endpoints')
  create(@CurrentPrincipal() principal: Principal, @Body({ schema: createEndpointBody }) body: CreateEndpointBody) {
    return this.hooks.create(principal, body);
  }

  @Get('endpoints')
  list(@CurrentPrincipal() principal: Principal) {
    return this.hooks.list(principal);
  }

  @Get('endpoints/:uuid')
  get(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.hooks.get(principal, uuid);
  }

  @Delete('endpoints/:uuid')
  @HttpCode(204)
  async remove(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    await this.hooks.remove(principal, uuid);
  }

  @Post('endpoints/:uuid/rotate-secret')
  @HttpCode(200)
  rotate(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.hooks.rotateSecret(principal, uuid);
  }

  @Get('endpoints/:uuid/events')
  events(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string, @Query({ schema: listEventsQuery }) query: ListEventsQuery) {
    return this.hooks.events(principal, uuid, query.limit);
  }

  @Get('events/:uuid')
  event(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.hooks.event(principal, uuid);
  }

  @Post('events/:uuid/replay')
  @HttpCode(202)
  replay(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.hooks.replay(principal, uuid);
  }

  @Post('events/:uuid/acknowledge')
  @HttpCode(200)
  acknowledge(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.hooks.acknowledge(principal, uuid);
  }
}
