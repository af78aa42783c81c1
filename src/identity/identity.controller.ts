import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AccountsService } from '../accounts/accounts.service';
import { CurrentPrincipal, Public, type Principal } from '../auth/principal';
import { notFound } from '../common/api-error';
import { DATABASE, IDENTITY } from '../common/di';
import { canonicalUuid } from '../common/uuid';
import type { DatabaseHandle } from '../../db/client';
import { appsOf, appView } from './apps';
import { burnCode, OAuthError, redeemCode } from './authorization-codes';
import type { Identity } from './identity';

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

@Controller()
export class IdentityController {
  constructor(
    @Inject(IDENTITY) private readonly identity: Identity,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    private readonly accounts: AccountsService,
  ) {}

  /** The JSON twin of the login host's token endpoint, for browser apps on the API's origin. Errors are RFC 6749's. */
  @Post('auth/end-user/token')
  @Public()
  @HttpCode(200)
  async token(@Req() req: Request, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    const code = field(body, 'code');
    try {
      const verifier = field(body, 'code_verifier');
      if (!code || !verifier) throw new OAuthError('invalid_request', 'code and code_verifier are required strings');
      const issued = await redeemCode(this.database.db, this.identity.tokens, { code, code_verifier: verifier, origin: req.headers.origin });
      return { token: issued.access_token, token_type: 'Bearer', expires_in: issued.expires_in, id_token: issued.id_token };
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      if (code) await burnCode(this.database.db, this.identity.tokens.ttlSeconds, code);
      res.status(400);
      return err.body;
    }
  }

  @Get('auth/end-user/jwks')
  @Public()
  jwks() {
    return this.identity.keys.jwks();
  }

  /** The organization's apps (org members only, as every route not marked for end users). */
  @Get('apps')
  async apps(@CurrentPrincipal() principal: Principal) {
    return { apps: (await appsOf(this.database.db, principal.organization_uuid)).map(appView) };
  }

  /**
   * TOTP off for an end user of one of the organization's apps (org members only), who can then
   * sign in with the password alone: the way back when the phone is lost or someone else enrolled
   * a secret. Another organization's app or end user is not found, as an unknown one.
   */
  @Delete('apps/:client_uuid/end-users/:end_user_uuid/mfa/totp')
  @HttpCode(204)
  async clearEndUserTotp(@CurrentPrincipal() principal: Principal, @Param('client_uuid') client: string, @Param('end_user_uuid') endUser: string) {
    const client_uuid = canonicalUuid(client);
    const end_user_uuid = canonicalUuid(endUser);
    const cleared =
      client_uuid && end_user_uuid && (await this.accounts.totp.clear({ organization_uuid: principal.organization_uuid, client_uuid, end_user_uuid }));
    if (!cleared) throw notFound(`end user ${endUser} of app ${client}`);
  }
}
