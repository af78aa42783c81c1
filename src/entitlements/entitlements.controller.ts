import { Controller, Get, Inject, Query, UsePipes } from '@nestjs/common';
import type { DatabaseHandle } from '../../db/client';
import { CurrentPrincipal, type Principal } from '../auth/principal';
import { DATABASE } from '../common/di';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import { type EntitlementQuery, entitlementQuerySchema, listEntitlements } from './entitlement-list';

/** What payments.access.grant_on_payment granted in the caller's organization. */
@Controller('entitlements')
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class EntitlementsController {
  constructor(@Inject(DATABASE) private readonly database: DatabaseHandle) {}

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query({ schema: entitlementQuerySchema }) query: EntitlementQuery) {
    return listEntitlements(this.database.db, principal.organization_uuid, query);
  }
}
