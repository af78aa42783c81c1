import { SECRET_REF } from '../../workflows/hook/contract';
import type { ConnectionStore } from '../connections';

/**
 * Reads a connection secret named by secret_ref (`<connection_uuid>/webhook_secret`, or
 * `<connection_uuid>/webhook_secrets.<key>` for one of a named map), inside the run's organization. The value never
 * leaves this process except sealed into the endpoint's row.
 */
export async function resolveSecretRef(connections: ConnectionStore, organizationUuid: string, secretRef: string): Promise<string | undefined> {
  const match = SECRET_REF.exec(secretRef);
  if (!match) return undefined;
  const row = await connections.get(organizationUuid, match[1].toLowerCase());
  if (!row) return undefined;
  const secrets = connections.decrypt(row);
  // A name of a named map (payments' webhook_secrets.<key>) reads inside it.
  const [name, key] = match[2].split(/\.(.*)/s);
  const own = (holder: unknown, field: string) =>
    holder && typeof holder === 'object' && !Array.isArray(holder) && Object.hasOwn(holder, field) ? (holder as Record<string, unknown>)[field] : undefined;
  const value = key === undefined ? own(secrets, name) : own(own(secrets, name), key);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
