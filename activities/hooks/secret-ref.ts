import { ApplicationFailure } from '@temporalio/common';
import { SECRET_REF } from '../../workflows/hook/contract';
import type { ConnectionStore } from '../connections';
import { webhookSecrets } from '../payments-secrets';

export type SecretRefResult = { secret: string } | { refused: 'secret_ref_not_found' | 'secret_ref_not_allowed' };

/** What a 422 or a run failure says of a secret_ref naming anything but a webhook signing secret. */
export const SECRET_REF_RULE = "must name a payments connection's webhook_secret or webhook_secrets.<key>";

/**
 * Reads the webhook signing secret named by secret_ref (`<connection_uuid>/webhook_secret`, or
 * `<connection_uuid>/webhook_secrets.<key>`) of a `payments` connection of the organization. Only
 * those: deliveries are HMACs over bodies anyone may post, so any other secret (an API token) would
 * be exposed to offline guessing; and the ingress of such an endpoint admits only events signed with
 * that same secret, which only a webhook signing secret can meet. The value never leaves this
 * process except sealed into the endpoint's row.
 */
export async function resolveSecretRef(connections: ConnectionStore, organizationUuid: string, secretRef: string): Promise<SecretRefResult> {
  const match = SECRET_REF.exec(secretRef);
  if (!match) return { refused: 'secret_ref_not_found' };
  const [name, key] = match[2].split(/\.(.*)/s);
  const named = name === 'webhook_secrets' && key !== undefined;
  if (!named && match[2] !== 'webhook_secret') return { refused: 'secret_ref_not_allowed' };
  const row = await connections.get(organizationUuid, match[1]);
  if (!row) return { refused: 'secret_ref_not_found' };
  if (row.plugin !== 'payments') return { refused: 'secret_ref_not_allowed' };
  const secrets = webhookSecrets(connections.decrypt(row));
  const value = named ? secrets.named.get(key) : secrets.fallback;
  return value ? { secret: value } : { refused: 'secret_ref_not_found' };
}

/** A run's failure for a refused secret_ref: its type is the refusal. */
export function secretRefRefusal(refused: 'secret_ref_not_found' | 'secret_ref_not_allowed', secretRef: string) {
  const message =
    refused === 'secret_ref_not_found'
      ? `secret_ref ${secretRef} names no webhook signing secret of this organization's connections`
      : `secret_ref ${secretRef} ${SECRET_REF_RULE}`;
  return ApplicationFailure.nonRetryable(message, refused);
}
