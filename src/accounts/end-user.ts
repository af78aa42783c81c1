import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiError } from '../common/api-error';

/** What the account routes need of an end-user bearer token's principal. */
export interface EndUserPrincipal {
  user_id: string;
  organization_uuid: string;
  token_type: 'end_user';
}

/** The end user a bearer token names; an org member's token is refused, these routes are about one's own account. */
export const CurrentEndUser = createParamDecorator((_: unknown, ctx: ExecutionContext): EndUserPrincipal => {
  const principal = ctx.switchToHttp().getRequest().principal;
  if (principal?.token_type !== 'end_user') {
    throw new ApiError(403, 'end_user_token_required', 'this route takes an end-user token: it acts on the signed-in end user');
  }
  return principal;
});
