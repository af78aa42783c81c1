import { Module } from '@nestjs/common';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { AccountsHousekeeping } from './housekeeping';

/** End-user accounts' JSON routes on the API (/api/auth/end-user/...). */
@Module({
  controllers: [AccountsController],
  providers: [AccountsService, AccountsHousekeeping],
  exports: [AccountsService],
})
export class AccountsModule {}
