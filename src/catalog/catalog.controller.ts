import { Controller, Get, Param, Query, UsePipes } from '@nestjs/common';
import { z } from 'zod';
import { AllowEndUsers, CurrentPrincipal, type Principal } from '../auth/principal';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { CatalogService } from './catalog.service';

/** One prefix at most: `?prefix=a&prefix=b` is refused, not read as no filter. */
const listTypesQuery = z.strictObject({ prefix: z.string().max(200).optional() });

@Controller('workflows/types')
@UsePipes(StorableTextPipe, SchemaValidationPipe)
// End users see only the types exposed to them.
@AllowEndUsers()
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query({ schema: listTypesQuery }) query: z.output<typeof listTypesQuery>) {
    return this.catalog.listTypesFor(principal, query.prefix);
  }

  @Get(':type')
  async definition(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.describe(await this.catalog.resolveFor(type, principal));
  }

  @Get(':type/schema')
  async schema(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.schemaOf(await this.catalog.resolveFor(type, principal));
  }

  // It names the organization's connections.
  @Get(':type/prerequisites')
  @AllowEndUsers(false)
  prerequisites(@CurrentPrincipal() principal: Principal, @Param('type') type: string) {
    return this.catalog.getPrerequisites(type, principal.organization_uuid);
  }
}
