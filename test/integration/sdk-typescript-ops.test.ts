import { execFile } from 'node:child_process';
import path from 'node:path';
import { ConflictError, NotFoundError, ValidationError, WorkflowFailedError } from '@workflow-engine/sdk';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { stackEnv } from '../support/api';
import { waitFor } from '../support/ports';
import { DELETE, deleteInput, engineFor, RESOURCES } from '../support/sdk';

// Cancel and schedules (issue 16, built on another branch): written against the shared contract.
jest.setTimeout(60_000);

const BIN = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'wfe');
function wfe(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = { PATH: process.env.PATH, WFE_URL: stackEnv.apiUrl, WFE_TOKEN: stackEnv.tokenA };
    execFile(process.execPath, [BIN, ...args], { env, timeout: 45_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('SDK: cancel', () => {
  const engine = engineFor();

  it('handle.cancel() ends a running run CANCELLED: wait() throws failure_type cancelled, the list filters it, retry re-drives it', async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    expect(await run.cancel()).toEqual({ workflow_id: run.workflowId, cancel_requested: true });
    const err = await run.wait({ timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).failureType).toBe('cancelled');
    expect(await run.get()).toMatchObject({
      status: 'CANCELLED',
      is_terminal: true,
      state_data: expect.objectContaining({ failure_type: 'cancelled' }),
    });

    const cancelled: string[] = [];
    for await (const r of await engine.workflows.list({ status: 'CANCELLED' })) cancelled.push(r.workflow_id);
    expect(cancelled).toContain(run.workflowId);

    await expect(engine.workflows.cancel(run.workflowId)).rejects.toMatchObject({
      constructor: ConflictError,
      status: 409,
      code: 'run_not_running',
    });
    expect((await run.retry()).workflow_id).toBe(run.workflowId);
    await run.cancel();
  });

  it("another organization's run is a 404 and stays running", async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    await expect(engineFor(stackEnv.tokenB).workflows.cancel(run.workflowId)).rejects.toBeInstanceOf(NotFoundError);
    expect((await run.get()).status).toBe('RUNNING');
    await run.cancel();
  });

  it('wfe cancel <id>: exit 0, then 1 once the run has ended', async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('hang'));
    const first = await wfe(['cancel', run.workflowId]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${run.workflowId} cancel requested`);
    await expect(run.wait({ timeoutMs: 30_000 })).rejects.toBeInstanceOf(WorkflowFailedError);
    const again = await wfe(['cancel', run.workflowId, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { status: 409, code: 'run_not_running' } });
  });
});

describe('SDK: schedules', () => {
  const engine = engineFor();

  it('create, get, list, pause, unpause, trigger (its run listed by schedule_id), delete; secrets redacted', async () => {
    const created = await engine.schedules.create({
      workflow_type: RESOURCES,
      initial_data: { base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN },
      interval_seconds: 3600,
    });
    expect(created).toMatchObject({
      schedule_id: expect.stringMatching(/^sch_/),
      workflow_type: RESOURCES,
      initial_data: { base_url: stackEnv.esignUrl, api_token: '[redacted]' },
      cron: null,
      interval_seconds: 3600,
      timezone: 'UTC',
      overlap: 'skip',
      paused: false,
    });
    expect(JSON.stringify(created)).not.toContain(ESIGN_VALID_TOKEN);
    const id = created.schedule_id;

    expect(await engine.schedules.get(id)).toMatchObject({ schedule_id: id });
    expect((await engine.schedules.list()).map((s) => s.schedule_id)).toContain(id);
    expect((await engine.schedules.pause(id)).paused).toBe(true);
    expect((await engine.schedules.unpause(id)).paused).toBe(false);
    expect(await engine.schedules.trigger(id)).toEqual({ schedule_id: id, triggered: true });
    const started = await waitFor('the triggered run', async () => (await engine.workflows.list({ schedule_id: id })).runs[0], 30_000, 250);
    expect(started.workflow_type).toBe(RESOURCES);

    await expect(engineFor(stackEnv.tokenB).schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await engine.schedules.delete(id);
    await expect(engine.schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a schedule with both cron and interval_seconds is a ValidationError', async () => {
    const body = { workflow_type: RESOURCES, initial_data: { base_url: stackEnv.esignUrl }, cron: '0 * * * *', interval_seconds: 60 };
    const err = await engine.schedules.create(body as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).status).toBe(422);
    expect((err as ValidationError).fields.length).toBeGreaterThan(0);
  });
});
