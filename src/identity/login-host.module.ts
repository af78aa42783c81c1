import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AccountPagesModule } from '../accounts/account-pages.module';
import { type AppDependencies, CoreModule } from '../app.module';
import { ErrorFilter } from '../common/error.filter';
import { EndSessionController } from './end-session.controller';
import { LoginHostController } from './login-host.controller';

/**
 * The login host's own Nest application (its own listener and origin, LOGIN_URL), in the API's
 * process. The hosted account pages are imported here. Errors are answered and logged as on the API
 * (Nest's own filter would log a query's message, bound values included, and answer an outage 500).
 */
@Module({})
export class LoginHostModule {
  static forRoot(deps: AppDependencies): DynamicModule {
    return {
      module: LoginHostModule,
      imports: [CoreModule.forRoot(deps), AccountPagesModule],
      controllers: [LoginHostController, EndSessionController],
      providers: [{ provide: APP_FILTER, useClass: ErrorFilter }],
    };
  }
}
