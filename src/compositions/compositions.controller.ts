import { Body, Controller, Get, Param, Post, Put, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type CompositionBody, compositionBodySchema } from './composition-body';
import { CompositionsService } from './compositions.service';

@Controller('compositions')
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class CompositionsController {
  constructor(private readonly compositions: CompositionsService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body({ schema: compositionBodySchema }) body: CompositionBody) {
    return this.compositions.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal) {
    return this.compositions.list(principal);
  }

  @Get(':uuid')
  get(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string) {
    return this.compositions.get(principal, uuid);
  }

  @Put(':uuid')
  update(@CurrentPrincipal() principal: Principal, @Param('uuid') uuid: string, @Body({ schema: compositionBodySchema }) body: CompositionBody) {
    return this.compositions.update(principal, uuid, body);
  }
}
