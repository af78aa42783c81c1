import { ESIGN_VALID_TOKEN } from '../../doubles/esign-double';
import type { ChaosStack, Disruption } from './chaos-stack';
import { uid } from './chaos-stack';

export const DELETE = 'esign.authorizations.delete-user-authorization';
export const RESOURCES = 'esign.resources.get-resource-information';
export const ENDPOINTS = 'dbhost.endpoints.list';
export const WAIT = 'dbhost.operations.wait';

/** One run the suite started, what it must end as, and the provider path whose calls it checks. */
export interface PlannedRun {
  kind: 'delete-ok' | 'delete-flaky' | 'resources' | 'endpoints' | 'endpoints-flaky' | 'wait';
  workflowType: string;
  input: Record<string, unknown>;
  /** The DELETE path: its 2xx answers are what must happen once. */
  deletePath?: string;
  /** The provider path only this run calls (all but the shared resource listing). */
  providerPath?: string;
  id?: string;
}

export const KINDS: PlannedRun['kind'][] = ['delete-ok', 'delete-flaky', 'resources', 'endpoints', 'endpoints-flaky', 'wait'];

/** A run of `kind` against the chaos provider; `reads` is how many polls a wait takes to see `finished`. */
export function planRun(chaos: ChaosStack, kind: PlannedRun['kind'], options: { reads?: number; pollInterval?: number } = {}): PlannedRun {
  const id = uid();
  switch (kind) {
    case 'delete-ok':
    case 'delete-flaky': {
      const authorizationid = `${kind === 'delete-ok' ? 'ok' : 'flaky'}-${id}`;
      const input = { base_url: chaos.provider.esignUrl, api_token: ESIGN_VALID_TOKEN, accountid: '4711', userid: `user-${id}`, authorizationid };
      const path = `/api/v2.1/accounts/4711/users/user-${id}/authorization/${authorizationid}`;
      return { kind, workflowType: DELETE, input, deletePath: path, providerPath: path };
    }
    case 'resources':
      return { kind, workflowType: RESOURCES, input: { base_url: chaos.provider.esignUrl } };
    case 'endpoints':
    case 'endpoints-flaky': {
      const project = `${kind === 'endpoints' ? 'proj' : 'flaky'}-${id}`;
      return {
        kind,
        workflowType: ENDPOINTS,
        input: { connection_uuid: chaos.dbhostConnection, dbhost_project_id: project },
        providerPath: `/api/v2/projects/${project}/endpoints`,
      };
    }
    case 'wait':
      return {
        kind,
        workflowType: WAIT,
        providerPath: `/api/v2/projects/proj-${id}/operations/finishes-${options.reads ?? 3}-${id}`,
        input: {
          connection_uuid: chaos.dbhostConnection,
          dbhost_project_id: `proj-${id}`,
          dbhost_operation_id: `finishes-${options.reads ?? 3}-${id}`,
          poll_interval: options.pollInterval ?? 1,
          timeout_seconds: 600,
        },
      };
  }
}

/** Round-robin over the kinds: a mixed workload of n runs. */
export function planMixed(chaos: ChaosStack, n: number, options: { reads?: number } = {}): PlannedRun[] {
  return Array.from({ length: n }, (_, i) => planRun(chaos, KINDS[i % KINDS.length], options));
}

export interface RunCheck {
  id: string;
  kind: string;
  status: string;
  transitions: number;
  problems: string[];
  createdAt: number;
  updatedAt: number;
  failureType?: string;
  failureReason?: string;
  /** A DELETE run that completed on a 404 after an attempt whose outcome was lost. */
  alreadyAbsent: boolean;
}

/**
 * What every run must satisfy once it ended: COMPLETED (nothing in these
 * workloads may fail), a history whose seq runs 1..n with no gap and no
 * duplicate, each transition leaving the state the previous one entered, the
 * last one entering COMPLETED; for a wait, one poll transition per poll_count.
 */
export function checkRun(planned: PlannedRun, run: any, history: any[]): RunCheck {
  const problems: string[] = [];
  const seqs = history.map((t) => t.seq);
  const expected = seqs.map((_, i) => i + 1);
  if (JSON.stringify(seqs) !== JSON.stringify(expected)) problems.push(`seq ${JSON.stringify(seqs)} is not 1..${seqs.length}`);
  if (new Set(seqs).size !== seqs.length) problems.push('duplicate seq');
  history.forEach((t, i) => {
    const from = i === 0 ? 'PENDING' : history[i - 1].to;
    if (t.from !== from) problems.push(`transition ${t.seq} leaves ${t.from}, expected ${from}`);
  });
  if (!run.is_terminal) problems.push(`not terminal: ${run.state_name}`);
  if (run.status !== 'COMPLETED') {
    const sd = run.state_data ?? {};
    problems.push(`ended ${run.status} (${sd.failure_type}: ${sd.failure_reason})`);
  }
  if (history.length && history[history.length - 1].to !== run.state_name) problems.push(`last transition enters ${history.at(-1).to}, run is ${run.state_name}`);
  if (planned.kind === 'wait' && run.status === 'COMPLETED') {
    const polls = history.filter((t) => t.action === 'poll').length;
    if (polls !== run.state_data?.poll_count) problems.push(`${polls} poll transitions, poll_count ${run.state_data?.poll_count}`);
    if (history[0]?.action !== 'start' || history.at(-1)?.action !== 'finish') problems.push('wait history is not start … finish');
  } else if (planned.kind !== 'wait' && run.status === 'COMPLETED') {
    if (history.length !== 1 || history[0].action !== 'execute') problems.push(`atomic history ${history.map((t) => t.action).join(',')}`);
  }
  if (planned.deletePath && run.status === 'COMPLETED') {
    const sd = run.state_data ?? {};
    const absent = sd.status_code === 404 && sd.already_absent === true;
    if (sd.status_code !== 204 && !absent) problems.push(`status_code ${sd.status_code}${sd.already_absent ? ' already_absent' : ''}`);
  }
  return {
    id: planned.id!,
    kind: planned.kind,
    status: run.status,
    transitions: history.length,
    problems,
    createdAt: Date.parse(run.created_at),
    updatedAt: Date.parse(run.updated_at),
    failureType: run.state_data?.failure_type,
    failureReason: run.state_data?.failure_reason,
    alreadyAbsent: run.state_data?.already_absent === true,
  };
}

export interface DeleteAudit {
  paths: number;
  /** 2xx answers actually delivered (the caller was still there when the answer was written). */
  answered2xx: number;
  /** Calls cut off in flight by a kill: retried, harmlessly, since no answer reached anyone. */
  cutOff: number;
  /** A DELETE re-sent after its 2xx, with a worker or Temporal disruption between the answer and the repeat (answered 404). */
  explainedRepeats: number;
  /** A DELETE re-sent after its 2xx with no disruption in between, or more calls than attempts: a completed call done twice. */
  duplicates: string[];
  /** A completed DELETE run whose path never got a 2xx answer. */
  missing: string[];
  /** How many DELETE activities Temporal recorded as completed at attempt 1, 2, … */
  completedAtAttempt: Record<number, number>;
}

/**
 * The DELETE must happen once per completed attempt. What is counted, per path:
 *  - the calls the provider answered 2xx, whether or not the answer reached its caller:
 *    each path has exactly one (the provider answers 404 once the authorization is gone). A call
 *    after it is a repeat, explained only when a worker kill or a Temporal restart falls
 *    between the 2xx and the repeat: activities are at-least-once, and a worker that
 *    dies (or cannot reach Temporal) after the answer but before Temporal recorded the
 *    completion leaves an attempt that did not complete; its retry finds the
 *    authorization gone and completes with already_absent. A repeat with no such
 *    disruption in between is a duplicate; a completed run with no 2xx is missing.
 *  - against Temporal's own record: the attempt number of the activity attempt that
 *    completed (from the run's history) bounds the calls on the path, one per attempt;
 *    more calls than that means an attempt called twice, or a call came after completion.
 */
export async function auditDeletes(chaos: ChaosStack, planned: PlannedRun[], explainers: Disruption['kind'][]): Promise<DeleteAudit> {
  const audit: DeleteAudit = { paths: 0, answered2xx: 0, cutOff: 0, explainedRepeats: 0, duplicates: [], missing: [], completedAtAttempt: {} };
  for (const p of planned) {
    if (!p.deletePath) continue;
    audit.paths += 1;
    const calls = chaos.provider.callsTo(p.deletePath);
    audit.cutOff += calls.filter((c) => c.cutOff).length;
    const answered = calls.filter((c) => !c.cutOff && c.status !== undefined && c.status >= 200 && c.status < 300);
    audit.answered2xx += answered.length;
    // Done at the provider: a 2xx written, even if its caller was gone before it arrived.
    const acted = calls.filter((c) => c.status !== undefined && c.status >= 200 && c.status < 300);
    if (!acted.length) audit.missing.push(`${p.id} ${p.deletePath}`);
    if (acted.length > 1) audit.duplicates.push(`${p.id} ${p.deletePath}: done ${acted.length} times`);
    const done = acted[0] && (acted[0].answeredAt ?? acted[0].arrivedAt);
    for (const repeat of done === undefined ? [] : calls.filter((c) => c.arrivedAt > done)) {
      if (chaos.disruptedBetween(done!, repeat.arrivedAt, explainers).length) audit.explainedRepeats += 1;
      else audit.duplicates.push(`${p.id} ${p.deletePath}: 2xx at ${done} and called again at ${repeat.arrivedAt} (${repeat.status})`);
    }
    const attempt = await chaos.completedActivityAttempt(p.id!);
    if (attempt === undefined || !Number.isInteger(attempt) || attempt < 1) audit.missing.push(`${p.id}: no completed activity attempt in its Temporal history (${attempt})`);
    else if (calls.length > attempt) audit.duplicates.push(`${p.id}: ${calls.length} calls but Temporal completed attempt ${attempt}`);
    if (attempt !== undefined) audit.completedAtAttempt[attempt] = (audit.completedAtAttempt[attempt] ?? 0) + 1;
  }
  return audit;
}

/** "attempt 1: 8, attempt 2: 4" */
export const attemptsLine = (audit: DeleteAudit) =>
  Object.entries(audit.completedAtAttempt)
    .map(([a, n]) => `${n} at attempt ${a}`)
    .join(', ');

export const mode = process.env.CHAOS_MODE === 'full' ? 'full' : 'short';

/** Writes straight to stdout, outside jest's console buffering, so the lines read as a report. */
export function report(scenario: string, lines: string[]): void {
  const prefix = `chaos[${mode}] ${scenario}:`;
  process.stdout.write(`\n${lines.map((l) => `${prefix} ${l}`).join('\n')}\n`);
}

export function pct(values: number[], p: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Every broken invariant of a scenario, gathered before asserting, so one
 * failure message lists them all (a first failing expect would hide the rest).
 */
export class Violations {
  readonly list: string[] = [];

  /** `items` broke `invariant`; shows the first few, each cut to a readable length. */
  add(invariant: string, items: unknown[]): void {
    if (!items.length) return;
    const shown = items.slice(0, 5).map((i) => (typeof i === 'string' ? i : JSON.stringify(i)).replace(/\s+/g, ' ').slice(0, 260));
    const more = items.length > shown.length ? ` … and ${items.length - shown.length} more` : '';
    this.list.push(`${invariant} (${items.length}): ${shown.join(' | ')}${more}`);
  }

  check(invariant: string, ok: boolean, detail = ''): void {
    if (!ok) this.list.push(`${invariant}${detail ? `: ${detail}` : ''}`);
  }
}
