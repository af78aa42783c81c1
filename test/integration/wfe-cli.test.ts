import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshOrgToken, stackEnv } from '../support/api';
import { DELETE, deleteInput, RESOURCES } from '../support/sdk';

jest.setTimeout(60_000);

const BIN = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'wfe');

/** The `wfe` bin npm linked, in a child process (async: the stack's doubles answer from this process). */
function wfe(args: string[], env: Record<string, string | undefined> = { WFE_URL: stackEnv.apiUrl, WFE_TOKEN: stackEnv.tokenA }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 45_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('wfe CLI against the live service', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wfe-cli-'));

  it('wfe types [prefix] and wfe schema <type>', async () => {
    const types = await wfe(['types', 'esign']);
    expect(types.code).toBe(0);
    expect(types.stdout).toContain(DELETE);
    expect(types.stdout).toContain(RESOURCES);
    const json = await wfe(['types', 'esign', '--json']);
    expect(
      JSON.parse(json.stdout)
        .types.map((t: { workflow_type: string }) => t.workflow_type)
        .sort(),
    ).toEqual([DELETE, RESOURCES]);
    const schema = await wfe(['schema', RESOURCES]);
    expect(schema.code).toBe(0);
    expect(JSON.parse(schema.stdout).input_schema.properties).toHaveProperty('base_url');
  });

  it('wfe start --data @file --watch follows the run and exits 0 on completed; get and history read it back', async () => {
    const file = path.join(dir, 'input.json');
    writeFileSync(file, JSON.stringify({ base_url: stackEnv.esignUrl }));
    const started = await wfe(['start', RESOURCES, '--data', `@${file}`, '--watch']);
    expect(started.code).toBe(0);
    const id = started.stdout.split('\n')[0]!;
    expect(id).toMatch(/^wf_/);
    expect(started.stdout).toMatch(/seq 1 {2}PENDING → COMPLETED \(execute\)/);
    expect(started.stdout).toContain('completed (COMPLETED)');

    const got = await wfe(['get', id, '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ workflow_id: id, status: 'COMPLETED' });
    const history = await wfe(['history', id, '--json']);
    expect(JSON.parse(history.stdout).transitions).toHaveLength(1);
    const runs = await wfe(['runs', '--type', RESOURCES, '--status', 'completed', '--json']);
    expect(JSON.parse(runs.stdout).runs.map((r: { workflow_id: string }) => r.workflow_id)).toContain(id);
  });

  it('wfe watch exits 1 on a failed run naming the failure; wfe retry --watch exits 0 once it completes', async () => {
    const started = await wfe(['start', DELETE, '--data', JSON.stringify(deleteInput('once401')), '--json']);
    expect(started.code).toBe(0);
    const { workflow_id: id } = JSON.parse(started.stdout);
    const watched = await wfe(['watch', id]);
    expect(watched.code).toBe(1);
    expect(watched.stderr).toContain(`run ${id} failed`);
    expect(watched.stderr).toContain('failure_type: unauthorized');
    expect(watched.stderr + watched.stdout).not.toContain('esign-double-valid-token');

    const retried = await wfe(['retry', id, '--watch', '--json']);
    expect(retried.code).toBe(0);
    const lines = retried.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ workflow_id: id, outcome: 'completed', state_data: { status_code: 204 } });
  });

  it('--json on a refusal: the error body on stderr, exit 1 (422 names the fields, 404)', async () => {
    const invalid = await wfe(['start', DELETE, '--data', '{"base_url":"nope"}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/initial_data\.accountid: .*\(rule: required\)/);
    const missing = await wfe(['get', 'wf_does_not_exist', '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { status: 404, code: 'not_found' } });
  });

  it('usage errors exit 2: no URL or token, data that is not JSON, an unknown command or status', async () => {
    expect((await wfe(['types'], {})).code).toBe(2);
    expect((await wfe(['types'], { WFE_URL: stackEnv.apiUrl })).stderr).toContain('--token or WFE_TOKEN');
    expect((await wfe(['start', RESOURCES, '--data', '{nope'])).code).toBe(2);
    expect((await wfe(['frobnicate'])).code).toBe(2);
    expect((await wfe(['runs', '--status', 'SLEEPING'])).code).toBe(2);
  });

  it('wfe generate writes typed bindings for the catalog, matching the committed ones for the built-in types', async () => {
    const out = path.join(dir, 'bindings');
    // A fresh organization's catalog is the built-in types alone: other suites compose types in the shared ones.
    const res = await wfe(['generate', '--out', out, '--sdk-import', '../index.js'], { WFE_URL: stackEnv.apiUrl, WFE_TOKEN: freshOrgToken('wfe-bindings') });
    expect(res.code).toBe(0);
    const committed = readFileSync(path.join(__dirname, '..', '..', 'sdk', 'typescript', 'src', 'generated', 'index.ts'), 'utf8');
    expect(readFileSync(path.join(out, 'index.ts'), 'utf8')).toBe(committed);
  });
});
