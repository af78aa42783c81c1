import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/** The Python SDK's static checks (settings in sdk/python/pyproject.toml): mypy strict, ruff lint and format. */

const SDK = path.resolve(__dirname, '../../sdk/python');
const BIN = path.join(SDK, '.venv', 'bin');
const run = promisify(execFile);

jest.setTimeout(300_000);

async function check(tool: string, args: string[]) {
  try {
    await run(path.join(BIN, tool), args, { cwd: SDK, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  } catch (err) {
    // ENOENT (no sdk/python/.venv: run scripts/bootstrap.sh) carries only a message.
    const { stdout, stderr, message } = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${tool} ${args.join(' ')} failed: ${message}\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

it('mypy --strict: the package and its tests', () => check('mypy', ['workflow_engine', 'tests']));

it('ruff check', () => check('ruff', ['check', '--no-cache', '.']));

it('ruff format --check (the generated bindings are formatted by their generator)', () =>
  check('ruff', ['format', '--check', '--no-cache', '--exclude', 'workflow_engine/generated', '.']));
