import { z } from 'zod';

/** The API's overlap names and Temporal's ScheduleOverlapPolicy for each. */
export const OVERLAP_POLICIES = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  buffer_all: 'BUFFER_ALL',
  cancel_other: 'CANCEL_OTHER',
  terminate_other: 'TERMINATE_OTHER',
  allow_all: 'ALLOW_ALL',
} as const;

export type Overlap = keyof typeof OVERLAP_POLICIES;

const MAX_INTERVAL_SECONDS = 366 * 24 * 60 * 60;

/**
 * Whether the runtime knows the IANA zone: Temporal would otherwise refuse it only at create.
 * Intl takes a name in any letter case, Temporal only as spelled in the tz database: a name
 * Intl resolves to the same letters in another case is refused.
 */
export function isTimeZone(name: string): boolean {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  return resolved === name || resolved.toLowerCase() !== name.toLowerCase();
}

/** POST /schedules' body: what a start takes, plus when and how the runs are started. */
export const scheduleBodySchema = z
  .strictObject({
    workflow_type: z.string().min(1).max(200),
    initial_data: z.record(z.string(), z.unknown()),
    cron: z
      .string()
      .min(1)
      .max(200)
      // Temporal takes a zone prefix too, and then refuses it beside timezone (default UTC) as "conflicting".
      .refine((cron) => !/^\s*(CRON_)?TZ=/i.test(cron), {
        message: 'must not start with CRON_TZ= or TZ=: give the zone as timezone',
        params: { rule: 'cron_timezone_prefix' },
      })
      .optional()
      .describe('A cron expression, e.g. "0 9 * * 1-5" (Temporal\'s cron syntax); the zone goes in timezone'),
    interval_seconds: z.int().min(1).max(MAX_INTERVAL_SECONDS).optional(),
    timezone: z
      .string()
      .min(1)
      .max(100)
      .refine(isTimeZone, { message: 'must be an IANA time zone name, spelled as in the tz database, e.g. Europe/Berlin', params: { rule: 'timezone' } })
      .default('UTC'),
    overlap: z.enum(Object.keys(OVERLAP_POLICIES) as [Overlap, ...Overlap[]]).default('skip'),
    paused: z.boolean().default(false),
  })
  .superRefine((body, ctx) => {
    if ((body.cron === undefined) === (body.interval_seconds === undefined)) {
      for (const field of ['cron', 'interval_seconds']) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'give exactly one of cron and interval_seconds', params: { rule: 'exactly_one_of' } });
      }
    }
  });

export type ScheduleBody = z.output<typeof scheduleBodySchema>;
