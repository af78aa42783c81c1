import { ApiError } from '../common/api-error';

/**
 * RFC 6750 §3.1: error_description is a quoted-string of %x20-21 / %x23-5B / %x5D-7E, so a quote,
 * a backslash or a control character in a refusal's message would break the header.
 */
const challengeText = (text: string) => text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '');

/**
 * The 401 of a request that sent no bearer token (or another scheme): a bare challenge, no error
 * attribute, as RFC 6750 §3.1 asks when the client may not know authentication is needed.
 */
export const missingToken = (message: string) => new ApiError(401, 'unauthorized', message, null, { 'WWW-Authenticate': 'Bearer' });

/**
 * The 401 of a bearer token that was sent and refused (unknown, revoked, expired, malformed):
 * `error="invalid_token"` tells a client to get a new token rather than prompt for one.
 */
export const invalidToken = (message: string) =>
  new ApiError(401, 'unauthorized', message, null, {
    'WWW-Authenticate': `Bearer error="invalid_token", error_description="${challengeText(message)}"`,
  });

/** Whether an Authorization header names the Bearer scheme (RFC 7235: case-insensitive), well formed or not. */
export const isBearerAttempt = (header: string) => /^bearer(\s|$)/i.test(header);
