import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { IdentityController } from './identity.controller';

/** The API's side of end-user sign-in: the JSON token endpoint, the JWKS, the organization's apps and their end users' TOTP reset. */
@Module({ imports: [AccountsModule], controllers: [IdentityController] })
export class IdentityModule {}
