import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';

export interface OrgMemberPrincipal {
  user_id: string;
  organization_uuid: string;
  username: string;
  token_type: 'org_member';
  principal_type: 'api_token';
}

/** An app's end user, from a token of the login host (src/identity/). */
export interface EndUserPrincipal {
  /** end_user_uuid */
  user_id: string;
  organization_uuid: string;
  /** The account's email. */
  username: string;
  token_type: 'end_user';
  principal_type: 'end_user';
  client_uuid: string;
  client_key: string;
  /** The login session's public id. */
  sid: string;
}

export type Principal = OrgMemberPrincipal | EndUserPrincipal;

export const isEndUser = (p: Principal | undefined): p is EndUserPrincipal => p?.token_type === 'end_user';

export const IS_PUBLIC = 'isPublic';
/** Marks a route that needs no bearer token (health, OpenAPI document, docs page). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const ALLOW_END_USERS = 'allowEndUsers';
/**
 * Routes are for organization members unless marked: an end-user token gets 403 elsewhere.
 * `AllowEndUsers(false)` on a handler closes it inside a controller marked open.
 */
export const AllowEndUsers = (allowed = true) => SetMetadata(ALLOW_END_USERS, allowed);

export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest().principal,
);
