import { type CanActivate, createParamDecorator, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthGuard, requireOrgMember } from '../auth/auth.guard';
import type { Principal } from '../auth/principal';
import { invalidToken, isBearerAttempt, missingToken } from '../auth/bearer-challenge';
import { ApiError } from '../common/api-error';
import { CONFIG, LOGGER } from '../common/di';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import { CodecJwtRejected, CodecJwtVerifier } from './jwt-verifier';
import { isLoopbackAddress } from './loopback';

/** Who calls the codec: an organization's member, or an operator who decodes every organization. */
export interface CodecCaller {
  via: 'token' | 'loopback' | 'jwt';
  /** Who, for the audit line: a token id, a JWT subject, or the loopback UI. */
  subject: string;
  /** The member's organization; null for the local UI and SSO callers, who have none. */
  organization_uuid: string | null;
  operator: boolean;
}

type CodecRequest = Request & { codecCaller?: CodecCaller; principal?: Principal };


/**
 * The one place codec callers are authenticated, per TEMPORAL_CODEC_AUTH. A bearer org
 * token works in token and loopback modes; loopback lets the local Temporal UI in without
 * one (a loopback peer sending the UI's Origin, which a web page elsewhere cannot forge);
 * jwt accepts only tokens the configured OIDC issuer signed for the configured audience.
 */
@Injectable()
export class CodecCallerGuard implements CanActivate {
  private readonly origins: Set<string>;
  private readonly jwt?: CodecJwtVerifier;

  constructor(
    private readonly auth: AuthGuard,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.origins = new Set(config.temporalUiOrigins);
    if (config.codecAuth.jwt) this.jwt = new CodecJwtVerifier(config.codecAuth.jwt);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<CodecRequest>();
    req.codecCaller = await this.identify(req);
    return true;
  }

  private async identify(req: CodecRequest): Promise<CodecCaller> {
    const header = req.headers.authorization;
    const { mode } = this.config.codecAuth;
    if (mode === 'jwt') return this.fromJwt(header);
    if (mode === 'loopback' && header === undefined) return this.fromLoopback(req);
    const principal = await this.auth.authenticate(header);
    requireOrgMember(principal);
    req.principal = principal;
    return {
      via: 'token',
      subject: principal.user_id,
      organization_uuid: principal.organization_uuid,
      operator: this.config.codecOrganizations.includes(principal.organization_uuid),
    };
  }

  private fromLoopback(req: CodecRequest): CodecCaller {
    const origin = req.headers.origin;
    if (!isLoopbackAddress(req.socket.remoteAddress) || typeof origin !== 'string' || !this.origins.has(origin)) {
      throw missingToken('missing bearer token (TEMPORAL_CODEC_AUTH=loopback admits no token only from a loopback address with an Origin in TEMPORAL_UI_ORIGINS)');
    }
    return { via: 'loopback', subject: `temporal-ui ${origin}`, organization_uuid: null, operator: true };
  }

  private async fromJwt(header: string | undefined): Promise<CodecCaller> {
    if (!header) throw missingToken('missing bearer token (TEMPORAL_CODEC_AUTH=jwt: the Temporal UI must forward its access token)');
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
    if (!match) {
      const message = 'malformed Authorization header: expected "Bearer <token>"';
      throw isBearerAttempt(header) ? invalidToken(message) : missingToken(message);
    }
    try {
      const claims = await this.jwt!.verify(match[1]);
      return { via: 'jwt', subject: String(claims.sub ?? 'unknown'), organization_uuid: null, operator: true };
    } catch (err) {
      if (err instanceof CodecJwtRejected) throw invalidToken(err.message);
      this.log.warn({ err: { message: (err as Error).message } }, 'codec JWT keys unavailable');
      throw new ApiError(503, 'codec_auth_unavailable', "the OIDC issuer's signing keys could not be fetched", null);
    }
  }
}

export const CurrentCodecCaller = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): CodecCaller => ctx.switchToHttp().getRequest<CodecRequest>().codecCaller!,
);
