import fs from 'node:fs';
import { ESIGN_VALID_TOKEN } from '../doubles/esign-double';
import { api, secretLeaks, stackEnv, uniqueId, waitForTerminal } from '../support/api';
import { waitFor } from '../support/ports';

jest.setTimeout(60_000);

const RESOURCES = 'esign.resources.get-resource-information';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const VIEW_FIELDS = [
  'schedule_id',
  'workflow_type',
  'initial_data',
  'cron',
  'interval_seconds',
  'timezone',
  'overlap',
  'paused',
  'created_at',
  'next_action_times',
  'recent_runs',
].sort();

const input = () => ({ base_url: stackEnv.esignUrl, api_token: ESIGN_VALID_TOKEN });
const created: string[] = [];

async function createSchedule(body: Record<string, unknown>, token = stackEnv.tokenA) {
  const res = await api('/api/schedules', { token, body: { workflow_type: RESOURCES, initial_data: input(), ...body } });
  if (res.status === 201) created.push(res.body.schedule_id);
  return res;
}

const runsOf = async (scheduleId: string, token = stackEnv.tokenA) =>
  (await api(`/api/workflows?schedule_id=${scheduleId}&limit=100`, { token })).body.runs as any[];

afterAll(async () => {
  for (const id of created) await api(`/api/schedules/${id}`, { method: 'DELETE' });
});

describe('POST /api/schedules', () => {
  it('creates a paused interval schedule: 201 with the view, secrets redacted, defaults filled', async () => {
    const res = await createSchedule({ interval_seconds: 3600, paused: true });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(VIEW_FIELDS);
    expect(res.body).toMatchObject({
      schedule_id: expect.stringMatching(/^sch_[0-9a-z]+$/),
      workflow_type: RESOURCES,
      initial_data: { base_url: stackEnv.esignUrl, api_token: '[redacted]' },
      cron: null,
      interval_seconds: 3600,
      timezone: 'UTC',
      overlap: 'skip',
      paused: true,
      recent_runs: [],
    });
    expect(res.body.created_at).toMatch(ISO);
    expect(JSON.stringify(res.body)).not.toContain(ESIGN_VALID_TOKEN);
  });

  it('creates a cron schedule in a time zone, with its next five times', async () => {
    const res = await createSchedule({ cron: '0 9 * * *', timezone: 'Europe/Berlin', overlap: 'buffer_one', paused: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ cron: '0 9 * * *', interval_seconds: null, timezone: 'Europe/Berlin', overlap: 'buffer_one' });
    const times: string[] = res.body.next_action_times;
    expect(times).toHaveLength(5);
    for (const t of times) {
      expect(t).toMatch(ISO);
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(new Date(t))).toBe('09:00');
    }
  });

  it.each([
    ['both cron and interval_seconds', { cron: '* * * * *', interval_seconds: 60 }, ['cron', 'interval_seconds'], 'exactly_one_of'],
    ['neither cron nor interval_seconds', {}, ['cron', 'interval_seconds'], 'exactly_one_of'],
    ['an unknown time zone', { interval_seconds: 60, timezone: 'Mars/Olympus' }, ['timezone'], 'timezone'],
    ['a time zone spelled in another case', { interval_seconds: 60, timezone: 'europe/berlin' }, ['timezone'], 'timezone'],
    // Intl knows it (an alias, in another case); only Temporal refuses it, and the refusal names the zone.
    ['an alias spelled in another case', { interval_seconds: 60, timezone: 'Etc/utc' }, ['timezone'], 'timezone'],
    ['a cron Temporal cannot parse', { cron: 'every so often' }, ['cron'], 'schedule_spec'],
    ['an interval of 0', { interval_seconds: 0 }, ['interval_seconds'], 'minimum'],
    ['an unknown overlap', { interval_seconds: 60, overlap: 'sometimes' }, ['overlap'], 'invalid_value'],
  ])('refuses %s with 422 naming the field, creating nothing', async (_what, body, fields, rule) => {
    const before = (await api('/api/schedules')).body.schedules.length;
    const res = await createSchedule(body);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: any) => d.field).sort()).toEqual(fields);
    expect(res.body.error.details.every((d: any) => d.rule === rule)).toBe(true);
    expect((await api('/api/schedules')).body.schedules.length).toBe(before);
  });

  it('validates initial_data like a start', async () => {
    const res = await createSchedule({ interval_seconds: 60, initial_data: { base_url: 'ftp://nowhere' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: any) => d.field)).toContain('initial_data.base_url');
    const unknown = await createSchedule({ interval_seconds: 60, workflow_type: 'esign.nope' });
    expect(unknown.status).toBe((await api('/api/workflows/start', { body: { workflow_type: 'esign.nope', initial_data: {} } })).status);
  });
});

describe('a schedule at work', () => {
  it('starts ordinary runs of the organization on its interval, listed with ?schedule_id=', async () => {
    const res = await createSchedule({ interval_seconds: 2 });
    const id = res.body.schedule_id;
    const runs = await waitFor('a scheduled run', async () => ((await runsOf(id)).length > 0 ? runsOf(id) : undefined), 20_000);
    expect(runs[0]).toMatchObject({ workflow_type: RESOURCES, organization_uuid: stackEnv.orgA, workflow_id: expect.stringMatching(/^wf_/) });
    const done = await waitForTerminal(runs[0].workflow_id);
    expect(done.status).toBe('COMPLETED');
    expect(done.state_data).toMatchObject({ status_code: 200, api_token: '[redacted]' });
    expect(await runsOf(id, stackEnv.tokenB)).toEqual([]);
    const view = (await api(`/api/schedules/${id}`)).body;
    expect(view.recent_runs.map((r: any) => r.workflow_id)).toContain(runs[0].workflow_id);
    expect(view.recent_runs[0].started_at).toMatch(ISO);
  });

  it('pauses and unpauses; a trigger starts a run at once even while paused', async () => {
    const id = (await createSchedule({ interval_seconds: 3600 })).body.schedule_id;
    const paused = await api(`/api/schedules/${id}/pause`, { method: 'POST' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ schedule_id: id, paused: true });
    const trigger = await api(`/api/schedules/${id}/trigger`, { method: 'POST' });
    expect(trigger.status).toBe(202);
    expect(trigger.body).toEqual({ schedule_id: id, triggered: true });
    const [run] = await waitFor('the triggered run', async () => ((await runsOf(id)).length ? runsOf(id) : undefined), 20_000);
    expect((await waitForTerminal(run.workflow_id)).status).toBe('COMPLETED');
    const unpaused = await api(`/api/schedules/${id}/unpause`, { method: 'POST' });
    expect(unpaused.status).toBe(200);
    expect(unpaused.body.paused).toBe(false);
  });

  it('lists the organization\'s schedules newest first, and deletes one (204, then 404)', async () => {
    const first = (await createSchedule({ interval_seconds: 3600, paused: true })).body.schedule_id;
    const second = (await createSchedule({ interval_seconds: 3600, paused: true })).body.schedule_id;
    const list = await api('/api/schedules');
    expect(list.status).toBe(200);
    const ids = list.body.schedules.map((s: any) => s.schedule_id);
    expect(ids.indexOf(second)).toBeLessThan(ids.indexOf(first));
    expect(ids.indexOf(second)).toBeGreaterThanOrEqual(0);
    expect((await api(`/api/schedules/${first}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/api/schedules/${first}`)).status).toBe(404);
    expect((await api('/api/schedules')).body.schedules.map((s: any) => s.schedule_id)).not.toContain(first);
  });
});

describe("a schedule's secrets", () => {
  it('never appear in its views, its runs, their history or the service log', async () => {
    const secret = uniqueId('schedule-token');
    const created = await createSchedule({ interval_seconds: 3600, paused: true, initial_data: { base_url: stackEnv.esignUrl, api_token: secret } });
    expect(created.status).toBe(201);
    const id = created.body.schedule_id;
    await api(`/api/schedules/${id}/trigger`, { method: 'POST' });
    const [run] = await waitFor('the triggered run', async () => ((await runsOf(id)).length ? runsOf(id) : undefined), 20_000);
    await waitForTerminal(run.workflow_id);
    const bodies: Array<[string, string]> = [];
    for (const path of [`/api/schedules/${id}`, '/api/schedules', `/api/workflows/${run.workflow_id}`, `/api/workflows/${run.workflow_id}/history`]) {
      bodies.push([path, JSON.stringify((await api(path)).body)]);
    }
    bodies.push(['create', JSON.stringify(created.body)]);
    await new Promise((r) => setTimeout(r, 1_000));
    const log = fs.readFileSync(stackEnv.logFile, 'utf8');
    expect(log).toContain(run.workflow_id);
    expect(secretLeaks({ api_token: secret }, [...bodies, ['the service log', log]])).toEqual([]);
    expect(bodies[0][1]).toContain('[redacted]');
  });
});

describe("another organization's schedule", () => {
  it('is 404 on every route and absent from its list, and stays untouched', async () => {
    const id = (await createSchedule({ interval_seconds: 3600, paused: true })).body.schedule_id;
    const b = { token: stackEnv.tokenB };
    expect((await api(`/api/schedules/${id}`, b)).status).toBe(404);
    for (const action of ['pause', 'unpause', 'trigger']) {
      const res = await api(`/api/schedules/${id}/${action}`, { ...b, method: 'POST' });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await api(`/api/schedules/${id}`, { ...b, method: 'DELETE' })).status).toBe(404);
    expect((await api('/api/schedules', b)).body.schedules.map((s: any) => s.schedule_id)).not.toContain(id);
    const mine = await api(`/api/schedules/${id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ paused: true, recent_runs: [] });
  });

  it('needs a token', async () => {
    expect((await api('/api/schedules', { token: null })).status).toBe(401);
  });
});
