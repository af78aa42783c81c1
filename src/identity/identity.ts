import { SecretBox } from '../../activities/secret-box';
import type { Database } from '../../db/client';
import type { AppConfig } from '../config';
import { AppOrigins } from './app-cors';
import { EndUserTokens } from './end-user-tokens';
import { SigningKeys } from './signing-keys';

/** The login host's keys and tokens, shared by the API and the login host of one process. */
export class Identity {
  readonly keys: SigningKeys;
  readonly tokens: EndUserTokens;
  readonly appOrigins: AppOrigins;

  constructor(
    readonly config: AppConfig['identity'],
    readonly db: Database,
    masterKey: Buffer,
  ) {
    this.keys = new SigningKeys(db, SecretBox.derive(masterKey, 'signing-keys'), config.endUserTokenTtlS * 1000);
    this.tokens = new EndUserTokens(db, this.keys, config.loginUrl, config.endUserTokenTtlS);
    this.appOrigins = new AppOrigins(db);
  }
}
