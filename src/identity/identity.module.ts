import { Module } from '@nestjs/common';
import { IdentityController } from './identity.controller';

/** The API's side of end-user sign-in: the JSON token endpoint, the JWKS and the organization's apps. */
@Module({ controllers: [IdentityController] })
export class IdentityModule {}
