/**
 * The /authorize parameters the hosted pages carry through sign-in (as hidden inputs and in
 * their links) and hand back to /authorize once a session exists. Only these, each bounded:
 * anything else a link adds is dropped rather than replayed.
 */
const NAMES = ['client_key', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method'] as const;
const MAX_LENGTH = 2048;

export type AuthorizeParams = Partial<Record<(typeof NAMES)[number], string>>;

export function pickAuthorizeParams(source: Record<string, unknown>): AuthorizeParams {
  const picked: AuthorizeParams = {};
  for (const name of NAMES) {
    const value = source[name];
    if (typeof value === 'string' && value.length <= MAX_LENGTH) picked[name] = value;
  }
  // client_id is OAuth's standard name for the client_key.
  if (!picked.client_key && typeof source.client_id === 'string' && source.client_id.length <= MAX_LENGTH) {
    picked.client_key = source.client_id;
  }
  return picked;
}

export const authorizeQuery = (params: AuthorizeParams) => new URLSearchParams(params as Record<string, string>).toString();
