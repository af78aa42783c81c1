import { Controller, Get } from '@nestjs/common';
import { AllowEndUsers, CurrentPrincipal, type Principal } from './principal';

@Controller('auth')
export class AuthController {
  @Get('me')
  @AllowEndUsers()
  me(@CurrentPrincipal() principal: Principal) {
    const { user_id, organization_uuid, username, token_type, principal_type } = principal;
    return { user_id, organization_uuid, username, token_type, principal_type };
  }
}
