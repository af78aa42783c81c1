import { Controller, Get, Param, Query, UsePipes } from '@nestjs/common';
import { AllowEndUsers, CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { CatalogService } from './catalog.service';

@Controller('workflows/types')
@UsePipes(StorableTextPipe)
// End users see only the types exposed to them.
@AllowEndUsers()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query('prefix') prefix?: string) {
    return this.catalog.listTypes(typeof prefix === 'string' ? prefix : undefined, principal);
  }

  @Get(':type')
  definition(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getDefinition(type, principal);
  }

  @Get(':type/schema')
  schema(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getSchema(type, principal);
  }

  // It names the organization's connections.
  @Get(':type/prerequisites')
  @AllowEndUsers(false)
  prerequisites(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getPrerequisites(type, principal.organization_uuid);
  }
}
