import { Body, Controller, Delete, Get, HttpCode, Param, Post, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type ScheduleBody, scheduleBodySchema } from './schedule-body';
import { SchedulesService } from './schedules.service';

@Controller('schedules')
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body({ schema: scheduleBodySchema }) body: ScheduleBody) {
    return this.schedules.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal) {
    return this.schedules.list(principal);
  }

  @Get(':id')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.schedules.get(principal, id);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.schedules.remove(principal, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  pause(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.schedules.pause(principal, id, true);
  }

  @Post(':id/unpause')
  @HttpCode(200)
  unpause(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.schedules.pause(principal, id, false);
  }

  @Post(':id/trigger')
  @HttpCode(202)
  trigger(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.schedules.trigger(principal, id);
  }
}
