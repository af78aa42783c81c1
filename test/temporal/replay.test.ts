import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { projectRoot } from '../../db/client';
import { tracingOff } from '../../src/telemetry/tracing';
import { engineWorkflowCode, tracedWorkflowInterceptorModules } from '../../src/worker/worker';
import { engineWiring } from '../support/engine-wiring';
import { testDataConverter } from '../support/temporal-test-env';

/**
 * Replays the recorded histories (written by `make record-histories`) against
 * today's workflow code: a change that would break runs in flight fails here.
 * test/histories/write-ahead holds today's recordings, made on a worker wired
 * as the service wires one; test/histories those of earlier code, made on a
 * worker without the engine's interceptors.
 */
const DIR = path.join(projectRoot(), 'test', 'histories');
const CURRENT = 'write-ahead';
const jsonIn = (dir: string) => fs.readdirSync(path.join(DIR, dir)).filter((f) => f.endsWith('.json')).sort();
const files = jsonIn('.');
const current = jsonIn(CURRENT).map((f) => path.join(CURRENT, f));

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

  it.each(files)('%s replays deterministically', async (file) => {
    const { workflowId, history } = load(file);
    await expect(
      Worker.runReplayHistory({ ...engineWorkflowCode, replayName: 'replay-test', dataConverter: testDataConverter }, history, workflowId),
    ).resolves.toBeUndefined();
  });

  // What the worker runs: the workflow interceptor modules (the engine's and OpenTelemetry's) in the sandbox.
  it.each([...files, ...current])('%s replays deterministically with the worker\'s workflow interceptors', async (file) => {
    const { workflowId, history } = load(file);
    const options = {
      ...engineWorkflowCode,
      interceptors: { workflowModules: tracedWorkflowInterceptorModules },
      sinks: {
        exporter: makeWorkflowExporter(tracingOff().processor, tracingOff().resource),
        ...engineWiring().sinks,
      },
      replayName: 'replay-interceptors',
      dataConverter: testDataConverter,
    };
    await expect(Worker.runReplayHistory(options, history, workflowId)).resolves.toBeUndefined();
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
