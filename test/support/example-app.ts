import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../db/client';

export interface ExampleApp {
  url: string;
  stop(): Promise<void>;
}

/** sdk/browser-auth/example/serve.mjs on a free loopback port, configured as its README says. */
export async function startExampleApp(env: Record<string, string>): Promise<ExampleApp> {
  const child: ChildProcess = spawn(process.execPath, [path.join(projectRoot(), 'sdk', 'browser-auth', 'example', 'serve.mjs')], {
    env: { PATH: process.env.PATH, EXAMPLE_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve.mjs did not start: ${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /example app: (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.mjs exited with ${code}: ${output}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
