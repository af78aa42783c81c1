import { type DynamicModule, Module } from '@nestjs/common';
import { AccountPagesModule } from '../accounts/account-pages.module';
import { type AppDependencies, CoreModule } from '../app.module';
import { LoginHostController } from './login-host.controller';

/**
 * The login host's own Nest application (its own listener and origin, LOGIN_URL), in the API's
 * process. The hosted account pages are imported here.
 */
@Module({})
export class LoginHostModule {
  static forRoot(deps: AppDependencies): DynamicModule {
    return {
      module: LoginHostModule,
      imports: [CoreModule.forRoot(deps), AccountPagesModule],
      controllers: [LoginHostController],
    };
  }
}
