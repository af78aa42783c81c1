import { Controller, Get } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from './principal';

@Controller('auth')
export class AuthController {
  @Get('me')
  me(@CurrentPrincipal() principal: Principal): Principal {
    return principal;
  }
}
