import { Command } from 'commander';
import { ORGANIZATION_ID } from '../activities/payload-keys';
import { loadMasterKey, SecretBox } from '../activities/secret-box';
import { openDatabase } from '../db/client';
import { sendAdminCommand } from './admin/admin-socket';
import { type AdminCommand, runAdminCommand } from './admin/org-admin';
import { adminSocketPath, loadConfig, pgliteDir } from './config';
import { keepDataDirPrivate } from './data-dir';
import { Identity } from './identity/identity';

/**
 * Organization and token administration. With DATABASE_URL it writes to
 * Postgres directly; on the PGlite default it goes through the running API's
 * admin socket, or opens PGlite itself when no API is running.
 */
async function execute(cmd: AdminCommand): Promise<Record<string, unknown>> {
  const config = loadConfig();
  keepDataDirPrivate(config.dataDir);
  if (!config.databaseUrl) {
    const viaApi = await sendAdminCommand(adminSocketPath(config), cmd);
    if (viaApi) return viaApi;
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: pgliteDir(config), poolSize: 1 });
  try {
    await database.migrate();
    // Only the signing keys need the master key: org and token commands work without it.
    const identity = cmd.command === 'keys.rotate' ? new Identity(config.identity, database.db, loadMasterKey(process.env, config.dataDir, false)) : undefined;
    return await runAdminCommand(database.db, cmd, identity);
  } finally {
    await database.close();
  }
}

function print(result: Record<string, unknown>, json: boolean, lines: string[]) {
  if (json) console.log(JSON.stringify(result));
  else console.log(lines.join('\n'));
}

const program = new Command('cli').description('Workflow Engine Service administration');
const org = program.command('org').description('organizations');
org
  .command('create <name>')
  .option('--json', 'print {"organization_uuid", "token"} as JSON')
  .action(async (name: string, opts: { json?: boolean }) => {
    const r = await execute({ command: 'org.create', name });
    const out = { organization_uuid: r.organization_uuid, token: r.token, token_id: r.token_id, name: r.name };
    print(out, Boolean(opts.json), [
      `organization: ${r.organization_uuid} (${r.name})`,
      `token:        ${r.token}`,
      'The token is shown once; store it now.',
    ]);
  });

const token = program.command('token').description('org-member tokens');
token
  .command('create')
  .requiredOption('--org <org_uuid>', 'organization the token belongs to')
  .option('--name <username>', 'name shown as username by /api/auth/me', 'cli')
  .option('--json', 'print {"organization_uuid", "token"} as JSON')
  .action(async (opts: { org: string; name: string; json?: boolean }) => {
    const r = await execute({ command: 'token.create', organization_uuid: opts.org, username: opts.name });
    print(r, Boolean(opts.json), [`token: ${r.token}`, `id:    ${r.token_id}`, 'The token is shown once; store it now.']);
  });
token
  .command('revoke <token_or_id>')
  .option('--json', 'print {"revoked"} as JSON')
  .action(async (tokenOrId: string, opts: { json?: boolean }) => {
    const r = await execute({ command: 'token.revoke', token: tokenOrId });
    print(r, Boolean(opts.json), [r.revoked ? 'revoked' : 'no live token matched']);
    if (!r.revoked) process.exitCode = 1;
  });

const keys = program.command('keys').description("the login host's token signing keys");
keys
  .command('rotate')
  .description('makes a new RS256 signing key; tokens signed with the old one verify until they expire')
  .option('--json', 'print {"kid"} as JSON')
  .action(async (opts: { json?: boolean }) => {
    const r = await execute({ command: 'keys.rotate' });
    print(r, Boolean(opts.json), [`new signing key: ${r.kid}`, 'Tokens signed with the previous key verify until they expire.']);
  });

program
  .command('codec-key')
  .description("an organization's Temporal payload key, for a service starting runs with the Temporal client")
  .requiredOption('--org <org_uuid>', 'organization the key encrypts for')
  .option('--json', 'print {"organization_uuid", "key", "key_id"} as JSON')
  .action((opts: { org: string; json?: boolean }) => {
    if (!ORGANIZATION_ID.test(opts.org)) throw new Error(`--org: "${opts.org}" is not an organization id (org_…)`);
    const config = loadConfig();
    const key = SecretBox.organizationPayloadKey(loadMasterKey(process.env, config.dataDir, false), opts.org);
    const out = { organization_uuid: opts.org, key: key.toString('hex'), key_id: new SecretBox(key).keyId };
    // The key alone on stdout, so that `KEY=$(… codec-key --org …)` works.
    print(out, Boolean(opts.json), [out.key]);
    if (!opts.json) console.error(`It encrypts and decrypts Temporal payloads of ${opts.org} only; keep it as secret as a token.`);
  });

program.parseAsync().catch((err: Error) => {
  console.error(`error: ${err.message}`);
  process.exit(1);
});
