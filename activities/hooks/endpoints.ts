import type { ConnectionStore } from '../connections';
import { resolveSecretRef } from './secret-ref';
import { type HookEndpointRow, type HookStore, newSigningSecret } from './store';

export type CreatedEndpoint =
  | { row: HookEndpointRow; /** Only a generated secret: the one time it can be shown. */ generatedSecret?: string }
  | { refused: 'secret_ref_not_found' | 'secret_ref_not_allowed' | 'endpoint_name_taken' };

/**
 * Creates an endpoint with a generated secret or the one secret_ref names; what the API's create
 * and hook.create-redirect share. The caller has checked target_url.
 */
export async function createEndpoint(
  stores: { hooks: HookStore; connections: ConnectionStore },
  organizationUuid: string,
  fields: { name: string; target_url: string; secret_ref?: string },
): Promise<CreatedEndpoint> {
  let secret = newSigningSecret();
  if (fields.secret_ref !== undefined) {
    const referenced = await resolveSecretRef(stores.connections, organizationUuid, fields.secret_ref);
    if ('refused' in referenced) return referenced;
    secret = referenced.secret;
  }
  const generated = fields.secret_ref === undefined;
  const row = await stores.hooks.createEndpoint(organizationUuid, {
    name: fields.name,
    targetUrl: fields.target_url,
    secret,
    secretSource: generated ? 'generated' : 'secret_ref',
    secretRef: fields.secret_ref,
  });
  if (!row) return { refused: 'endpoint_name_taken' };
  return generated ? { row, generatedSecret: secret } : { row };
}
