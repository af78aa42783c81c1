export {
  createAuthClient,
  DEFAULT_IDENTITY_API,
  DEFAULT_LOGIN_URL,
  type AuthClient,
  type AuthClientOptions,
  type EndUserClaims,
  type RegisterResult,
  type Session,
} from './client.js';
export {
  ApiRequestError,
  AuthError,
  CallbackError,
  InvalidTokenError,
  LoginRequiredError,
  RenewTimeoutError,
  TokenRequestError,
} from './errors.js';
export type { KeyValueStore, StorageChoice } from './storage.js';
