import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { workflowBundlerOptions } from '../../src/worker/worker';
import { localEnv } from '../support/temporal-test-env';
import type { zodOfThisRun } from './fixtures/preload';

jest.setTimeout(60_000);

/** The worker's bundler options make every run share one zod instead of evaluating its own (workflows/runtime/sandbox-preload.ts). */
describe('modules the sandbox preloads', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await localEnv();
  });

  afterAll(async () => {
    await env?.teardown();
  });

  async function runTwice(bundlerOptions: WorkerOptions['bundlerOptions']) {
    const taskQueue = `preload-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('./fixtures/preload'),
      bundlerOptions,
    });
    return worker.runUntil(async () => {
      const run = () => env.client.workflow.execute<typeof zodOfThisRun>('zodOfThisRun', { taskQueue, workflowId: `wf_${randomUUID()}` });
      return [await run(), await run()];
    });
  }

  it('every run gets the worker thread\'s zod, which still parses and reports problems', async () => {
    for (const result of await runTwice(workflowBundlerOptions)) {
      expect(result).toEqual({ preloaded: true, parsed: { n: 1 }, problem: expect.stringMatching(/expected number/i) });
    }
  });

  it('without the options, each run evaluates zod for itself', async () => {
    for (const result of await runTwice(undefined)) expect(result.preloaded).toBe(false);
  });
});
