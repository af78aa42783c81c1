import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type CreateBody, ConnectionsService, createBody, type ListQuery, listQuery, type UpdateBody, updateBody } from './connections.service';

@Controller('connections')
// The text check first: a NUL or a lone surrogate is named as such whatever else the schema finds.
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body({ schema: createBody }) body: CreateBody) {
    return this.connections.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query({ schema: listQuery }) query: ListQuery) {
    return this.connections.list(principal, query.plugin || undefined);
  }

  @Get(':uuid')
  get(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.connections.get(principal, uuid);
  }

  @Patch(':uuid')
  update(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string, @Body({ schema: updateBody }) body: UpdateBody) {
    return this.connections.update(principal, uuid, body);
  }

  @Delete(':uuid')
  @HttpCode(204)
  async remove(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    await this.connections.delete(principal, uuid);
  }
}
