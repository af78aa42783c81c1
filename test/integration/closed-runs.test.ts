import { Connection } from '@temporalio/client';
import { DBHOST_VALID_TOKEN } from '../doubles/dbhost-double';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

jest.setTimeout(45_000);

/**
 * An execution that Temporal closes without the workflow's say (terminated from the UI or CLI, a
 * schedule's terminate_other) cannot write its own end: the API's sweep (CLOSED_RUN_SWEEP_SECONDS,
 * 1 s on the test stack) projects it as FAILED.
 */
describe('a run whose execution Temporal terminated', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await Connection.connect({ address: stackEnv.temporalAddress });
  });
  afterAll(() => connection?.close());

  it('ends FAILED terminated, its stream ends with failed, and it is neither cancellable nor retryable', async () => {
    const created = await api('/api/connections', {
      body: { plugin: 'dbhost', name: uniqueId('closed-runs'), config: { api_url: process.env.TEST_DBHOST_URL }, secrets: { api_token: DBHOST_VALID_TOKEN } },
    });
    expect(created.status).toBe(201);
    // An operation that never finishes, polled every 30 s: the run rests in its timer until Temporal ends it.
    const id = await startRun('dbhost.operations.wait', {
      connection_uuid: created.body.connection_uuid,
      dbhost_project_id: 'floral-king-961888',
      dbhost_operation_id: uniqueId('never'),
      poll_interval: 30,
      timeout_seconds: 600,
    });
    await waitFor(`run ${id} polling`, async () => ((await api(`/api/workflows/${id}/history`)).body.transitions?.length >= 1 ? true : undefined));
    const stream = readStream(id);
    await connection.workflowService.terminateWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: id }, reason: 'operator stopped it' });

    const run = await waitForTerminal(id);
    expect(run).toMatchObject({ status: 'FAILED', state_name: 'FAILED', is_terminal: true });
    expect(run.state_data).toMatchObject({ failure_type: 'terminated', failed_at_state: expect.any(String), dbhost_operation_id: expect.stringMatching(/^never/) });
    expect(run.state_data.failure_reason).toContain('terminated in Temporal');
    expect(JSON.stringify(run)).not.toContain(DBHOST_VALID_TOKEN);
    expect((await stream).events.at(-1)).toMatchObject({ event: 'failed', data: { error: { failure_type: 'terminated' } } });
    const history = (await api(`/api/workflows/${id}/history`)).body.transitions as any[];
    expect(history.at(-1)).toMatchObject({ action: 'fail', to: 'FAILED', seq: history.length });

    expect((await api(`/api/workflows/${id}/cancel`, { method: 'POST' })).body.error.code).toBe('run_not_running');
    expect((await api(`/api/workflows/${id}/retry`, { method: 'POST' })).body.error.code).toBe('not_retryable');
  });

  it("shows the run's input with its secrets redacted, as a failed run's end does", async () => {
    const token = `${ESIGN_VALID_TOKEN}`;
    const id = await startRun('esign.authorizations.delete-user-authorization', {
      base_url: stackEnv.esignUrl,
      api_token: token,
      accountid: '1001',
      userid: 'user-1',
      authorizationid: uniqueId('hang'),
    });
    await waitFor(`run ${id} in its provider call, which never answers`, async () => {
      const described = await connection.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: id } });
      return described.pendingActivities?.length ? true : undefined;
    });
    await connection.workflowService.terminateWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: id }, reason: 'operator stopped it' });
    const run = await waitForTerminal(id);
    expect(run.state_data).toMatchObject({ failure_type: 'terminated', api_token: '[redacted]', accountid: '1001', authorizationid: expect.stringMatching(/^hang/) });
    expect(JSON.stringify(await api(`/api/workflows/${id}/history`))).not.toContain(token);
  });
});
