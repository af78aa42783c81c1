import { Controller, Get, Param, Query, UsePipes } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { CatalogService } from './catalog.service';

@Controller('workflows/types')
@UsePipes(StorableTextPipe)
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(@Query('prefix') prefix?: string) {
    return this.catalog.listTypes(typeof prefix === 'string' ? prefix : undefined);
  }

  @Get(':type')
  definition(@Param('type') type: string) {
    return this.catalog.getDefinition(type);
  }

  @Get(':type/schema')
  schema(@Param('type') type: string) {
    return this.catalog.getSchema(type);
  }

  @Get(':type/prerequisites')
  prerequisites(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getPrerequisites(type, principal.organization_uuid);
  }
}
