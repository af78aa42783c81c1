import { Module } from '@nestjs/common';
import { AccountPagesController } from './account-pages.controller';
import { AccountsService } from './accounts.service';

/** The hosted account pages, imported into the login host's own Nest app. */
@Module({
  controllers: [AccountPagesController],
  providers: [AccountsService],
  exports: [AccountsService],
})
export class AccountPagesModule {}
