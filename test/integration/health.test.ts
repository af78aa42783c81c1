import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../db/client';
import { api } from '../support/api';
import { freePort, waitFor } from '../support/ports';

jest.setTimeout(45_000);

describe('GET /api/health', () => {
  it('answers 200 with both dependencies ok, without a token', async () => {
    const res = await api('/api/health', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok', temporal: 'ok', database: 'ok' });
  });

  describe('an API process whose Temporal does not answer', () => {
    let child: ChildProcess | undefined;
    let dataDir: string | undefined;
    let output = '';
    let url = '';

    beforeAll(async () => {
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        TEMPORAL_ADDRESS: '127.0.0.1:1', // nothing listens there
        LOG_LEVEL: 'info',
        ENGINE_SECRET_KEY: randomBytes(32).toString('hex'), // required at start; unused by this test
      };
      if (process.env.TEST_DATABASE_URL) {
        env.DATABASE_URL = process.env.TEST_DATABASE_URL;
      } else {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-health-'));
        env.DATA_DIR = dataDir;
      }
      const root = projectRoot();
      child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js'), 'api'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      await waitFor(
        'the API to listen',
        async () => {
          if (child!.exitCode !== null) throw new Error(`api exited with ${child!.exitCode}: ${output.slice(-2000)}`);
          return output.includes('"API listening"') || undefined;
        },
        30_000,
        100,
      );
    });

    afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('answers 503 naming temporal as unavailable within a few seconds, every time', async () => {
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(8_000) });
        const elapsed = Date.now() - started;
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({
          status: 'unavailable',
          temporal: 'unavailable',
          database: 'ok',
          error: { code: 'unavailable', message: 'temporal not answering', details: null },
        });
        expect(elapsed).toBeLessThan(5_000);
      }
    });

    it('keeps serving other requests meanwhile (no hang)', async () => {
      const [health, unauthenticated] = await Promise.all([
        fetch(`${url}/api/health`, { signal: AbortSignal.timeout(8_000) }),
        fetch(`${url}/api/workflows`, { signal: AbortSignal.timeout(8_000) }),
      ]);
      expect(health.status).toBe(503);
      expect(unauthenticated.status).toBe(401);
      expect(child!.exitCode).toBeNull();
    });
  });
});
