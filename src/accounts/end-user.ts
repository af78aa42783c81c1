import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type EndUserPrincipal, isEndUser } from '../auth/principal';
import { ApiError } from '../common/api-error';

export type { EndUserPrincipal };

/** The end user a bearer token names; an org member's token is refused: these routes act on one's own account. */
export const CurrentEndUser = createParamDecorator((_: unknown, ctx: ExecutionContext): EndUserPrincipal => {
  const principal = ctx.switchToHttp().getRequest().principal;
  if (!isEndUser(principal)) {
    throw new ApiError(403, 'end_user_token_required', 'this route takes an end-user token: it acts on the signed-in end user');
  }
  return principal;
});
