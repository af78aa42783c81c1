import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { temporalBinary } from '../support/temporal-server';

/**
 * The chaos suites each start a stack of their own (test/chaos/support/chaos-stack.ts),
 * so there is nothing shared to start here: this checks what they need and says
 * which scenarios run in this mode, and why one does not.
 */
export default async function chaosGlobalSetup(): Promise<void> {
  const root = projectRoot();
  for (const needed of [path.join(root, 'dist', 'src', 'main.js'), path.join(root, 'dist', 'workflow-bundle.js'), temporalBinary()]) {
    if (!fs.existsSync(needed)) throw new Error(`${needed} missing: run \`npm run build\` (and scripts/bootstrap.sh) first`);
  }
  const mode = process.env.CHAOS_MODE === 'full' ? 'full' : 'short';
  const lines = [`chaos: ${mode} form; database ${process.env.DATABASE_URL ? 'Postgres (DATABASE_URL)' : 'PGlite'}`];
  if (!process.env.DATABASE_URL) {
    lines.push(
      'chaos: scenario 3 (Postgres unreachable) NOT RUN and not counted: on PGlite the database lives inside the service process, ' +
        'so it cannot be made unreachable while the service runs; set DATABASE_URL (CI does) to run it',
    );
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
}
