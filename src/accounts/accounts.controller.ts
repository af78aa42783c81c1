import { Body, Controller, Delete, HttpCode, Post, Req, UsePipes } from '@nestjs/common';
import type { Request } from 'express';
import { AllowEndUsers, Public } from '../auth/principal';
import { ApiError, validationFailed } from '../common/api-error';
import { clientAddress } from '../common/client-address';
import { StorableTextPipe } from '../common/storable-text.pipe';
import { SchemaValidationPipe } from '../common/validation';
import {
  type PasswordResetBody,
  passwordResetBody,
  type PasswordResetCompleteBody,
  passwordResetCompleteBody,
  type RegisterBody,
  registerBody,
  type TotpConfirmBody,
  totpConfirmBody,
  type TotpStartBody,
  totpStartBody,
  totpRemoveBody,
  type TotpRemoveBody,
  type VerifyEmailBody,
  verifyEmailBody,
} from './account-schemas';
import { AccountsService } from './accounts.service';
import { CurrentEndUser, type EndUserPrincipal } from './end-user';
import { isLocked, type Locked } from './totp-enrolment';

const noSuchApp = () => validationFailed([{ field: 'client_key', rule: 'known_app', message: 'must name a provisioned app' }]);
/** The sign-in lock of the account or address: the same wait the sign-in page would give. */
const locked = ({ retryAfter }: Locked) =>
  new ApiError(429, 'rate_limited', `too many wrong passwords or codes for this account or from this address; retry after ${retryAfter} s`, { scope: 'sign-in', retry_after_seconds: retryAfter }, {
    'Retry-After': String(retryAfter),
  });
const badToken = () => validationFailed([{ field: 'token', rule: 'valid_token', message: 'is unknown, used or expired' }]);

/** The JSON side of end-user accounts, on the API under /api/auth/end-user. */
@Controller('auth/end-user')
@UsePipes(StorableTextPipe, SchemaValidationPipe)
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Public()
  @Post('register')
  async register(@Body({ schema: registerBody }) body: RegisterBody, @Req() req: Request) {
    const wait = await this.accounts.registrationRetryAfter(clientAddress(req));
    if (wait > 0) {
      throw new ApiError(429, 'rate_limited', `too many registrations from this client address; retry after ${wait} s`, { scope: 'registrations-client', retry_after_seconds: wait }, {
        'Retry-After': String(wait),
      });
    }
    const app = await this.accounts.findApp(body.client_key);
    if (!app) throw noSuchApp();
    const result = await this.accounts.register(app, body.email, body.password);
    if (result === 'taken') throw new ApiError(409, 'email_taken', 'an account with this email already exists for this app');
    return { end_user_uuid: result.end_user_uuid, email_verification: 'sent' };
  }

  @Public()
  @Post('verify-email')
  @HttpCode(200)
  async verifyEmail(@Body({ schema: verifyEmailBody }) body: VerifyEmailBody) {
    const user = await this.accounts.verifyEmail(body.token);
    if (!user) throw badToken();
    return { end_user_uuid: user.endUserUuid, email_verified: true };
  }

  /** 202 whether or not the account exists: the answer must not tell. */
  @Public()
  @Post('password-reset')
  @HttpCode(202)
  async passwordReset(@Body({ schema: passwordResetBody }) body: PasswordResetBody) {
    const app = await this.accounts.findApp(body.client_key);
    if (!app) throw noSuchApp();
    this.accounts.requestPasswordReset(app, body.email);
    return { password_reset: 'requested' };
  }

  @Public()
  @Post('password-reset/complete')
  @HttpCode(200)
  async passwordResetComplete(@Body({ schema: passwordResetCompleteBody }) body: PasswordResetCompleteBody) {
    if (!(await this.accounts.completePasswordReset(body.token, body.password))) throw badToken();
    return { password_reset: 'completed' };
  }

  @AllowEndUsers()
  @Post('mfa/totp')
  @HttpCode(200)
  async enrolTotp(@CurrentEndUser() principal: EndUserPrincipal, @Body({ schema: totpStartBody }) body: TotpStartBody, @Req() req: Request) {
    const result = await this.accounts.totp.start(await this.accounts.requireEndUser(principal), body.password, clientAddress(req));
    if (result === 'enrolled') throw new ApiError(409, 'totp_already_enabled', 'TOTP is already on; DELETE mfa/totp first to enrol a new secret');
    if (result === 'wrong_password') throw validationFailed([{ field: 'password', rule: 'current_password', message: "is not the account's current password" }]);
    if (isLocked(result)) throw locked(result);
    return result;
  }

  @AllowEndUsers()
  @Post('mfa/totp/confirm')
  @HttpCode(200)
  async confirmTotp(@CurrentEndUser() principal: EndUserPrincipal, @Body({ schema: totpConfirmBody }) body: TotpConfirmBody, @Req() req: Request) {
    const result = await this.accounts.totp.confirm(await this.accounts.requireEndUser(principal), body.code, clientAddress(req));
    if (isLocked(result)) throw locked(result);
    if (result === 'none') throw new ApiError(409, 'totp_not_started', 'no TOTP enrolment to confirm: POST mfa/totp first');
    if (result === 'invalid') throw validationFailed([{ field: 'code', rule: 'current_code', message: 'is not the current code for this secret' }]);
    return { totp: 'enabled' };
  }

  @AllowEndUsers()
  @Delete('mfa/totp')
  @HttpCode(204)
  async removeTotp(
    @CurrentEndUser() principal: EndUserPrincipal,
    @Body({ schema: totpRemoveBody.optional() }) body: TotpRemoveBody | undefined,
    @Req() req: Request,
  ) {
    const result = await this.accounts.totp.remove(await this.accounts.requireEndUser(principal), body?.code, clientAddress(req));
    if (isLocked(result)) throw locked(result);
    if (result === 'invalid') {
      throw validationFailed([{ field: 'code', rule: 'current_code', message: 'TOTP is on: removing it takes the current code (a code already used is not accepted again)' }]);
    }
  }
}
