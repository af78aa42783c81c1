import type { ScheduleDescription } from '@temporalio/client';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { isTimeZone, scheduleBodySchema } from '../../src/schedules/schedule-body';
import { overlapPolicy, scheduleSpec, scheduleState } from '../../src/schedules/schedule-spec';
import { fieldProblems } from '../../workflows/runtime/field-problems';

const base = { workflow_type: 't', initial_data: {} };

describe('schedule body', () => {
  it('fills the defaults', () => {
    expect(scheduleBodySchema.parse({ ...base, interval_seconds: 60 })).toEqual({
      ...base,
      interval_seconds: 60,
      timezone: 'UTC',
      overlap: 'skip',
      paused: false,
    });
  });

  it.each([
    ['both', { cron: '* * * * *', interval_seconds: 60 }],
    ['neither', {}],
  ])('names cron and interval_seconds with rule exactly_one_of when %s is given', (_what, when) => {
    const parsed = scheduleBodySchema.safeParse({ ...base, ...when });
    expect(parsed.success).toBe(false);
    const problems = fieldProblems(parsed.error!, { ...base, ...when });
    expect(problems.map((p) => [p.field, p.rule])).toEqual([
      ['cron', 'exactly_one_of'],
      ['interval_seconds', 'exactly_one_of'],
    ]);
  });

  it('refuses an unknown time zone with rule timezone', () => {
    const body = { ...base, interval_seconds: 60, timezone: 'Nowhere/Atlantis' };
    const parsed = scheduleBodySchema.safeParse(body);
    expect(fieldProblems(parsed.error!, body)).toEqual([
      { field: 'timezone', rule: 'timezone', message: 'must be an IANA time zone name, spelled as in the tz database, e.g. Europe/Berlin' },
    ]);
  });

  it.each(['CRON_TZ=Asia/Tokyo 0 9 * * *', ' tz=Asia/Tokyo 0 9 * * *'])('refuses a zone prefix in cron (%s), naming cron, not timezone', (cron) => {
    const body = { ...base, cron };
    const parsed = scheduleBodySchema.safeParse(body);
    expect(fieldProblems(parsed.error!, body)).toEqual([
      { field: 'cron', rule: 'cron_timezone_prefix', message: 'must not start with CRON_TZ= or TZ=: give the zone as timezone' },
    ]);
  });

  it('knows IANA zones', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Nowhere')).toBe(false);
  });

  it('takes aliases as spelled in the tz database, and no name in another letter case (Temporal refuses those)', () => {
    for (const alias of ['Etc/UTC', 'US/Pacific', 'Asia/Calcutta', 'GMT']) expect(isTimeZone(alias)).toBe(true);
    for (const miscased of ['europe/berlin', 'utc', 'EUROPE/BERLIN']) expect(isTimeZone(miscased)).toBe(false);
  });
});

describe('schedule spec', () => {
  it('maps a cron or an interval, with the time zone', () => {
    expect(scheduleSpec({ cron: '0 9 * * *', timezone: 'Europe/Berlin' })).toEqual({ cronExpressions: ['0 9 * * *'], timezone: 'Europe/Berlin' });
    expect(scheduleSpec({ interval_seconds: 90, timezone: 'UTC' })).toEqual({ intervals: [{ every: 90_000 }], timezone: 'UTC' });
  });

  it("maps overlap names to Temporal's policies", () => {
    expect(overlapPolicy('skip')).toBe('SKIP');
    expect(overlapPolicy('buffer_one')).toBe('BUFFER_ONE');
    expect(overlapPolicy('terminate_other')).toBe('TERMINATE_OTHER');
  });

  it('keeps five next times and the runs started by actions', () => {
    const times = Array.from({ length: 8 }, (_, i) => new Date(Date.UTC(2030, 0, 1, i)));
    const state = scheduleState({
      state: { paused: true },
      info: {
        nextActionTimes: times,
        recentActions: [
          {
            scheduledAt: times[0],
            takenAt: new Date(Date.UTC(2030, 0, 1, 0, 0, 1)),
            action: { type: 'startWorkflow', workflow: { workflowId: 'wf_a-2030-01-01T00:00:00Z', firstExecutionRunId: 'r' } },
          },
        ],
      },
    } as unknown as Pick<ScheduleDescription, 'state' | 'info'>);
    expect(state).toEqual({
      paused: true,
      next_action_times: times.slice(0, 5).map((t) => t.toISOString()),
      recent_runs: [{ workflow_id: 'wf_a-2030-01-01T00:00:00Z', started_at: '2030-01-01T00:00:01.000Z' }],
    });
  });
});

describe('OpenAPI document', () => {
  it('describes cancel and the schedule routes with their answers', () => {
    const doc = buildOpenApiDocument() as any;
    expect(Object.keys(doc.paths['/api/workflows/{id}/cancel'].post.responses)).toEqual(expect.arrayContaining(['202', '404', '409']));
    expect(doc.paths['/api/schedules'].post.responses['201']).toBeDefined();
    expect(Object.keys(doc.paths['/api/schedules/{id}'])).toEqual(['get', 'delete']);
    expect(doc.paths['/api/schedules/{id}/trigger'].post.responses['202']).toBeDefined();
    const listParams = doc.paths['/api/workflows'].get.parameters.map((p: any) => p.name);
    expect(listParams).toContain('schedule_id');
    const status = doc.paths['/api/workflows'].get.parameters.find((p: any) => p.name === 'status');
    expect(status.schema.enum).toContain('CANCELLED');
  });
});
