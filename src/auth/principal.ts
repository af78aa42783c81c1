import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';

export interface Principal {
  user_id: string;
  organization_uuid: string;
  username: string;
  token_type: 'org_member';
  principal_type: 'api_token';
}

export const IS_PUBLIC = 'isPublic';
/** Marks a route that needs no bearer token (health, OpenAPI document, docs page). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest().principal,
);
