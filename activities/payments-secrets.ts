/**
 * A payments connection's signing secrets as the plugin stores them: a default `webhook_secret`
 * and `webhook_secrets` named by key (rotation keeps old and new side by side). Read as own
 * string properties only, so a key such as `constructor` names no secret.
 */
export interface WebhookSecrets {
  fallback?: string;
  named: Map<string, string>;
}

export function webhookSecrets(stored: Record<string, unknown>): WebhookSecrets {
  const fallback = typeof stored.webhook_secret === 'string' && stored.webhook_secret ? stored.webhook_secret : undefined;
  const map = stored.webhook_secrets;
  const named = new Map<string, string>();
  if (map && typeof map === 'object' && !Array.isArray(map)) {
    for (const [key, secret] of Object.entries(map)) if (typeof secret === 'string' && secret) named.set(key, secret);
  }
  return { fallback, named };
}
