import path from 'node:path';
import { envInteger } from '../common/env-integer';

/** End-user account settings, from the environment; the README's Configuration table lists them. */
export interface AccountsConfig {
  /** smtp:// or smtps:// with credentials; unset writes each message to outboxDir instead. */
  smtpUrl?: string;
  mailFrom: string;
  outboxDir: string;
  /** Failed sign-ins per account (per app and email) within the window before it is locked. */
  signInMaxFailuresPerAccount: number;
  /** Failed sign-ins per client address within the window before that address is locked. */
  signInMaxFailuresPerClient: number;
  /** The counting window and the lock's length. */
  signInLockSeconds: number;
  /** Verification and reset mails to one address of one app within the account-limit window; more are not sent. */
  mailsPerEmail: number;
  /** Registrations tried from one client address within the window; more are refused (429). */
  registrationsPerClient: number;
  accountLimitWindowSeconds: number;
}

export function loadAccountsConfig(env: NodeJS.ProcessEnv, dataDir: string): AccountsConfig {
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) throw new Error('SMTP_URL must start with smtp:// or smtps://');
  return {
    smtpUrl,
    mailFrom: env.MAIL_FROM || 'Workflow Engine <no-reply@localhost>',
    outboxDir: path.join(dataDir, 'outbox'),
    signInMaxFailuresPerAccount: envInteger(env, 'SIGN_IN_MAX_FAILURES_PER_ACCOUNT', 10, 1),
    signInMaxFailuresPerClient: envInteger(env, 'SIGN_IN_MAX_FAILURES_PER_CLIENT', 50, 1),
    signInLockSeconds: envInteger(env, 'SIGN_IN_LOCK_SECONDS', 900, 1),
    mailsPerEmail: envInteger(env, 'ACCOUNT_MAILS_PER_EMAIL', 5, 1),
    registrationsPerClient: envInteger(env, 'REGISTRATIONS_PER_CLIENT', 20, 1),
    accountLimitWindowSeconds: envInteger(env, 'ACCOUNT_LIMIT_WINDOW_SECONDS', 3600, 1),
  };
}
