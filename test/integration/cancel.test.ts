import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, esignCalls, readStream, stackEnv, startRun, uniqueId, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

jest.setTimeout(60_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const RESOURCES = 'esign.resources.get-resource-information';

/** A delete whose provider call never answers: the run stays RUNNING until cancelled. */
const hangingDelete = () => ({
  base_url: stackEnv.esignUrl,
  api_token: ESIGN_VALID_TOKEN,
  accountid: '4711',
  userid: uniqueId('user'),
  authorizationid: uniqueId('hang'),
});

const cancel = (id: string, token = stackEnv.tokenA) => api(`/api/workflows/${id}/cancel`, { token, method: 'POST' });

/** Started, and its provider call in flight, so the cancel reaches an activity. */
async function startHanging(): Promise<{ id: string; input: ReturnType<typeof hangingDelete> }> {
  const input = hangingDelete();
  const id = await startRun(DELETE, input);
  await waitFor('the provider call', async () => (await esignCalls(input.authorizationid)).length > 0 || undefined);
  return { id, input };
}

describe('POST /api/workflows/{id}/cancel', () => {
  it('cancels a run in a provider call: 202, then CANCELLED with failure_type cancelled, and the stream ends failed', async () => {
    const { id } = await startHanging();
    const res = await cancel(id);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ workflow_id: id, cancel_requested: true });

    const run = await waitForTerminal(id, stackEnv.tokenA, 20_000);
    expect(run).toMatchObject({ status: 'CANCELLED', state_name: 'FAILED', is_terminal: true });
    expect(run.state_data).toMatchObject({ failure_type: 'cancelled', failed_step: 'cancel', failed_at_state: 'pending', api_token: '[redacted]' });

    const history = await api(`/api/workflows/${id}/history`);
    expect(history.body.transitions.map((t: any) => [t.from, t.action, t.to])).toEqual([['PENDING', 'fail', 'FAILED']]);

    const stream = await readStream(id);
    const end = stream.events.at(-1)!;
    expect(end.event).toBe('failed');
    expect(end.data.error).toMatchObject({ message: 'run cancelled', failure_type: 'cancelled' });
  });

  it('lists cancelled runs with ?status=CANCELLED, and only those', async () => {
    const { id } = await startHanging();
    await cancel(id);
    await waitForTerminal(id);
    const listed = await api('/api/workflows?status=CANCELLED&limit=100');
    expect(listed.status).toBe(200);
    expect(listed.body.runs.map((r: any) => r.workflow_id)).toContain(id);
    expect(new Set(listed.body.runs.map((r: any) => r.status))).toEqual(new Set(['CANCELLED']));
    const failed = await api('/api/workflows?status=FAILED&limit=100');
    expect(failed.body.runs.map((r: any) => r.workflow_id)).not.toContain(id);
  });

  it('retries a cancelled run like a failed one: same id, attempt 2, the provider called again', async () => {
    const { id, input } = await startHanging();
    await cancel(id);
    await waitForTerminal(id);
    const retried = await api(`/api/workflows/${id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ workflow_id: id, state_name: 'PENDING', is_terminal: false });
    await waitFor('the retried call', async () => (await esignCalls(input.authorizationid)).length > 1 || undefined);
    expect((await api(`/api/workflows/${id}`)).body).toMatchObject({ status: 'RUNNING', attempt: 2 });

    expect((await cancel(id)).status).toBe(202);
    const run = await waitForTerminal(id);
    expect(run).toMatchObject({ status: 'CANCELLED', attempt: 2 });
  });

  it('refuses a terminal run with 409 run_not_running, changing nothing', async () => {
    const id = await startRun(RESOURCES, { base_url: stackEnv.esignUrl });
    const done = await waitForTerminal(id);
    expect(done.status).toBe('COMPLETED');
    const res = await cancel(id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'run_not_running' });
    expect(res.body.error.message).toContain('COMPLETED');
    expect((await api(`/api/workflows/${id}`)).body).toMatchObject({ status: 'COMPLETED', updated_at: done.updated_at });

    const { id: cancelled } = await startHanging();
    await cancel(cancelled);
    await waitForTerminal(cancelled);
    const again = await cancel(cancelled);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run_not_running');
  });

  it("answers 404 for another organization's run and an unknown one, and the run keeps running", async () => {
    const { id } = await startHanging();
    const foreign = await cancel(id, stackEnv.tokenB);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await cancel('wf_doesnotexist')).status).toBe(404);
    expect((await api(`/api/workflows/${id}`)).body.status).toBe('RUNNING');
    await cancel(id);
    await waitForTerminal(id);
  });

  it('needs a token', async () => {
    const res = await api('/api/workflows/wf_any/cancel', { token: null, method: 'POST' });
    expect(res.status).toBe(401);
  });
});
