import fs from 'node:fs';

/**
 * DATA_DIR holds the secret key, the dev token, PGlite's files and the admin socket: the owner's
 * alone. The directory is 0700 (one left open by an older version is tightened), and everything
 * this process creates is 0600 / 0700 (umask 077), PGlite's files too, which it writes with the
 * default mode. Called first by every entry point that may touch the directory.
 */
export function keepDataDirPrivate(dataDir: string): void {
  process.umask(0o077);
  if (fs.existsSync(dataDir)) fs.chmodSync(dataDir, 0o700);
}
