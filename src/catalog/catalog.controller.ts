import { Controller, Get, Param, Query, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { CatalogService } from './catalog.service';

@Controller('workflows/types')
@UsePipes(StorableTextPipe)
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query('prefix') prefix?: string) {
    return this.catalog.listTypesFor(principal.organization_uuid, typeof prefix === 'string' ? prefix : undefined);
  }

  @Get(':type')
  async definition(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.describe(await this.catalog.resolve(type, principal.organization_uuid));
  }

  @Get(':type/schema')
  async schema(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.schemaOf(await this.catalog.resolve(type, principal.organization_uuid));
  }

  @Get(':type/prerequisites')
  prerequisites(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getPrerequisites(type, principal.organization_uuid);
  }
}
