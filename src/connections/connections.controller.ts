import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { RejectNulPipe } from '../common/reject-nul.pipe';
import { ConnectionsService } from './connections.service';

@Controller('connections')
@UsePipes(RejectNulPipe)
export class ConnectionsController {
  constructor(private readonly connections: ConnectionsService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return this.connections.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query('plugin') plugin?: string) {
    return this.connections.list(principal, typeof plugin === 'string' ? plugin : undefined);
  }

  @Get(':uuid')
  get(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.connections.get(principal, uuid);
  }

  @Patch(':uuid')
  update(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string, @Body() body: unknown) {
    return this.connections.update(principal, uuid, body);
  }

  @Delete(':uuid')
  @HttpCode(204)
  async remove(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    await this.connections.delete(principal, uuid);
  }
}
