/** Base class of every error this package throws, so callers can tell ours from the platform's. */
export class AuthError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The login host has no valid session for this user (revoked, expired or never signed in):
 * only an interactive signIn() can help, so nothing retries after this.
 */
export class LoginRequiredError extends AuthError {}

/** The page's callback parameters cannot be trusted or carry an error: nothing was stored. */
export class CallbackError extends AuthError {
  constructor(
    message: string,
    /** `state_mismatch`, `iss_mismatch`, `no_transaction`, `token_mismatch`, or the login host's `error` parameter. */
    readonly code: string,
    readonly description?: string,
  ) {
    super(message);
  }
}

/** The hidden renewal frame did not answer in time; the current session is left as it was. */
export class RenewTimeoutError extends AuthError {}

/**
 * The token endpoint refused the code (RFC 6749 error form), or could not be reached: `status` 0
 * and `code` `network_error`, the platform's error as `cause`.
 */
export class TokenRequestError extends AuthError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly description?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A JSON API call (register, ...) answered with the service's error shape. */
export class ApiRequestError extends AuthError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
  }
}

/** verify(): the token's signature, algorithm, issuer, audience or lifetime is not acceptable. */
export class InvalidTokenError extends AuthError {}
