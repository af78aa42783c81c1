import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { projectRoot } from '../../db/client';
import { tracingOff } from '../../src/telemetry/tracing';
import { engineWorkflowCode, tracedWorkflowInterceptorModules } from '../../src/worker/worker';
import { engineWiring } from '../support/engine-wiring';
import { testDataConverter } from '../support/temporal-test-env';

/**
 * Replays the recorded histories (written by `make record-histories`) against
 * today's workflow code: a change that would break runs in flight fails here.
 * test/histories/current holds today's recordings, made on a worker wired as
 * the service wires one; each other directory under test/histories holds an
 * earlier generation's, made the same way and kept when a patch changed what
 * the code records (write-ahead: before the Dag's and dbhost wait's patches;
 * pre-outcome-carry: before the e-signature delete kept an unknown outcome for a retry;
 * before-step-requirements: a composed run whose input lacked what a step
 * needs, which ran that step until the composition-step-requirements patch);
 * test/histories itself those made before transitions were written ahead, on
 * a worker without the engine's interceptors.
 */
const DIR = path.join(projectRoot(), 'test', 'histories');
const CURRENT = 'current';
const jsonIn = (dir: string) => fs.readdirSync(path.join(DIR, dir)).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(dir, f));
const files = jsonIn('.');
const current = jsonIn(CURRENT);
const earlierWired = fs
  .readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== CURRENT)
  .flatMap((d) => jsonIn(d.name));

const load = (file: string) => {
  const json = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8'));
  // The file is named after the run's workflow id (a Dag's children's ids derive from it), `@…` telling executions apart.
  return { workflowId: path.basename(file, '.json').split('@')[0], history: historyFromJSON(json) };
};

describe('replay of recorded histories', () => {
  it.each([
    ['today', current],
    ['earlier code', files],
  ])('has a recording of %s for every workflow type', async (_, recorded) => {
    const { workflowTypes } = await import('../../workflows/registry');
    const recordedTypes = new Set(
      recorded.map((f) => load(f).history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name),
    );
    for (const type of workflowTypes) expect(recordedTypes).toContain(type);
  });

  const plain = { ...engineWorkflowCode, replayName: 'replay-test', dataConverter: testDataConverter };
  // What the worker runs: the workflow interceptor modules (the engine's and OpenTelemetry's) in the sandbox.
  const wired = {
    ...engineWorkflowCode,
    interceptors: { workflowModules: tracedWorkflowInterceptorModules },
    sinks: { exporter: makeWorkflowExporter(tracingOff().processor, tracingOff().resource), ...engineWiring().sinks },
    replayName: 'replay-interceptors',
    dataConverter: testDataConverter,
  };

  /** Replays the files on one replay worker, in order; answers each file that did not replay, with why. */
  async function replayAll(options: ReplayWorkerOptions, recorded: string[]): Promise<string[]> {
    const broken: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(options, recorded.map(load))) {
      if (result.error) broken.push(`${recorded[replayed]}: ${result.error.name}: ${result.error.message}`);
      replayed += 1;
    }
    expect(replayed).toBe(recorded.length);
    return broken;
  }

  it('replays the histories of earlier code deterministically', async () => {
    expect(await replayAll(plain, files)).toEqual([]);
  });

  it.each([
    ['earlier code', files],
    ['earlier wired generations', earlierWired],
    ['today', current],
  ])('replays the histories of %s deterministically with the worker\'s workflow interceptors', async (_, recorded) => {
    expect(recorded.length).toBeGreaterThan(0);
    expect(await replayAll(wired, recorded)).toEqual([]);
  });

  it("detects a Dag history whose child the code would not start", async () => {
    const { workflowId, history } = load('webhook-dag-completed.json');
    const initiated = history.events!.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)!;
    initiated.startChildWorkflowExecutionInitiatedEventAttributes!.workflowType!.name = 'hook.something-else';
    await expect(
      Worker.runReplayHistory({ ...engineWorkflowCode, replayName: 'replay-negative-dag', dataConverter: testDataConverter }, history, workflowId),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });

  it('detects a history the code would not produce', async () => {
    const { workflowId, history } = load('esign-delete-completed.json');
    const scheduled = history.events!.find((e) => e.activityTaskScheduledEventAttributes)!;
    scheduled.activityTaskScheduledEventAttributes!.activityType!.name = 'somethingElse';
    await expect(
      Worker.runReplayHistory({ ...engineWorkflowCode, replayName: 'replay-negative', dataConverter: testDataConverter }, history, workflowId),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
