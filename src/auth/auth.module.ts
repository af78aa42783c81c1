import { Module } from '@nestjs/common';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { TokenResolver } from './token-resolver';

@Module({
  controllers: [AuthController],
  providers: [AuthGuard, TokenResolver],
  exports: [AuthGuard, TokenResolver],
})
export class AuthModule {}
