import type { SecretBox } from '../../activities/secret-box';

/** How long the code page stays valid after the password was accepted. */
const TTL_MS = 5 * 60_000;
const AAD = Buffer.from('totp-challenge');

export interface PasswordAccepted {
  end_user_uuid: string;
  client_uuid: string;
}

/**
 * Between the password and the code, the browser holds this sealed (AES-GCM) note, not a
 * session: it proves the password step passed for that user and app, for five minutes.
 */
export class TotpChallenge {
  constructor(private readonly box: SecretBox) {}

  issue(accepted: PasswordAccepted, now = Date.now()): string {
    const note = JSON.stringify({ ...accepted, expires_at: now + TTL_MS });
    return this.box.seal(Buffer.from(note), AAD).toString('base64url');
  }

  open(sealed: unknown, now = Date.now()): PasswordAccepted | undefined {
    if (typeof sealed !== 'string' || sealed.length > 1024) return undefined;
    try {
      const note = JSON.parse(this.box.open(Buffer.from(sealed, 'base64url'), AAD).toString());
      if (typeof note.expires_at !== 'number' || note.expires_at <= now) return undefined;
      return { end_user_uuid: String(note.end_user_uuid), client_uuid: String(note.client_uuid) };
    } catch {
      return undefined;
    }
  }
}
