import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { freshOrgToken, stackEnv, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { outboundAllowFor } from '../support/outbound';

/**
 * The Python SDK's pytest suite (sdk/python/tests) against this live stack, one jest test per
 * pytest module, as two organizations of its own (so its listings hold only its runs). The 429
 * tests get an extra API allowing two reads a minute per token.
 */

const SDK = path.resolve(__dirname, '../../sdk/python');
const PYTHON = path.join(SDK, '.venv', 'bin', 'python');
const MODULES = fs
  .readdirSync(path.join(SDK, 'tests'))
  .filter((f) => /^test_.*\.py$/.test(f))
  .sort();

jest.setTimeout(300_000);

const limited = new ExtraApi({
  TEMPORAL_ADDRESS: stackEnv.temporalAddress,
  ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY!,
  RATE_LIMIT_READS_PER_MINUTE_TOKEN: '2',
  ALLOW_HTTP_HOSTS: '127.0.0.1',
  OUTBOUND_ALLOW: outboundAllowFor(stackEnv.esignUrl),
});
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  await limited.start();
  const tokenFor = () => JSON.parse(limited.cli(['org', 'create', uniqueId('sdk-python-limited'), '--json'])).token as string;
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PYTHONDONTWRITEBYTECODE: '1',
    TEST_API_URL: stackEnv.apiUrl,
    TEST_TOKEN_A: freshOrgToken('sdk-python'),
    TEST_TOKEN_B: freshOrgToken('sdk-python-other'),
    TEST_ESIGN_URL: stackEnv.esignUrl,
    TEST_ESIGN_TOKEN: ESIGN_VALID_TOKEN,
    TEST_LIMITED_API_URL: limited.url,
    TEST_LIMITED_TOKEN_SYNC: tokenFor(),
    TEST_LIMITED_TOKEN_ASYNC: tokenFor(),
  };
});
afterAll(() => limited.stop());

function pytest(module: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-m', 'pytest', '-q', '--tb=short', '-p', 'no:cacheprovider', `tests/${module}`], { cwd: SDK, env });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

it.each(MODULES)('pytest %s', async (module) => {
  const { code, output } = await pytest(module);
  if (code !== 0) console.log(output);
  // Exit code 5 is "no tests collected": a module must run something.
  expect(code).toBe(0);
  expect(output).toMatch(/\b\d+ passed\b/);
});
