import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../db/client';
import { createOrganization, resolveToken } from './auth/org-tokens';
import type { AppConfig } from './config';

/**
 * `make up` only: a dev organization on first start. Its token is kept in
 * .data/dev-token (mode 0600) so later starts print the same one.
 */
export async function ensureDevToken(config: AppConfig, db: Database): Promise<string> {
  const file = path.join(config.dataDir, 'dev-token');
  if (fs.existsSync(file)) {
    const token = fs.readFileSync(file, 'utf8').trim();
    if (await resolveToken(db, token)) return token;
  }
  const created = await createOrganization(db, 'dev');
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, created.token + '\n', { mode: 0o600 });
  return created.token;
}
