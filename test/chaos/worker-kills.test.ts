import { ChaosStack, randomBetween, sleep } from './support/chaos-stack';
import { attemptsLine, auditDeletes, checkRun, KINDS, mode, planMixed, type PlannedRun, report, type RunCheck, Violations } from './support/workload';

/**
 * Scenario 1: concurrent runs of every kind (esign delete ok-/flaky-, resource
 * listing, dbhost endpoints ok-/flaky-, dbhost operation waits) while the
 * worker is SIGKILLed at random moments and restarted. On PGlite the worker
 * shares its process with the API, so each kill takes the API down too: starts
 * are retried with their Idempotency-Key and reads wait for it.
 */
const P =
  mode === 'full'
    ? { runs: 200, kills: 6, startMs: 10_000, windowMs: 40_000, downMs: [0, 2_000], deadlineMs: 300_000 }
    : { runs: 36, kills: 2, startMs: 6_000, windowMs: 12_000, downMs: [0, 1_000], deadlineMs: 150_000 };

jest.setTimeout(P.deadlineMs + P.windowMs + 180_000);

describe(`chaos: worker SIGKILLed during ${P.runs} concurrent runs (${mode})`, () => {
  const chaos = new ChaosStack();
  beforeAll(() => chaos.start('worker-kills'));
  afterAll(() => chaos.stop());

  it('every run ends COMPLETED (none FAILED by the kills), histories contiguous from seq 1, every DELETE done once', () => chaos.guard(async () => {
    const t0 = Date.now();
    const planned = planMixed(chaos, P.runs, { reads: 3 });
    let startRetries = 0;

    // Starts spread over startMs, then kills keep landing among the runs still in flight.
    const starting = (async () => {
      const gap = P.startMs / P.runs;
      await Promise.all(
        planned.map(async (p: PlannedRun, i) => {
          await sleep(i * gap);
          const { id, tries } = await chaos.startRun(p.workflowType, p.input);
          p.id = id;
          startRetries += tries - 1;
        }),
      );
    })();

    // Kill moments: random, in order, within the window.
    const kills: Array<{ at: number; runningBefore: number | string; downMs: number; restartMs: number }> = [];
    const killing = (async () => {
      const moments = Array.from({ length: P.kills }, () => randomBetween(0.1 * P.windowMs, 0.95 * P.windowMs)).sort((a, b) => a - b);
      for (const moment of moments) {
        await sleep(Math.max(0, t0 + moment - Date.now()));
        const running = await chaos.request('/api/workflows?status=RUNNING&limit=100', { timeoutMs: 5_000 });
        const runningBefore = running.status === 200 ? running.body.runs.length + (running.body.next_cursor ? '+' : '') : '?';
        const restart = await chaos.kill(chaos.workerRole, 'worker-kill');
        const at = Date.now() - t0;
        const downMs = randomBetween(P.downMs[0], P.downMs[1]);
        await sleep(downMs);
        const r0 = Date.now();
        await restart();
        kills.push({ at, runningBefore, downMs, restartMs: Date.now() - r0 });
      }
    })();

    await Promise.all([starting, killing]);
    const startedAll = Date.now() - t0;
    const ids = planned.map((p) => p.id!);
    const notEnded = await chaos.waitAllTerminal(ids, P.deadlineMs);
    chaos.assertNoCrash('worker-kills');
    const endedAt = Date.now() - t0;

    const checks: RunCheck[] = [];
    for (const p of planned) {
      if (notEnded.includes(p.id!)) continue;
      const { run, history } = await chaos.readRun(p.id!);
      checks.push(checkRun(p, run, history));
    }
    const transitions = checks.reduce((n, c) => n + c.transitions, 0);
    // Only the provider's own failures spend a call's retries, and these runs' provider fails
    // only the flaky kinds' first call: no run may end FAILED, however many kills it met.
    const broken = checks.filter((c) => c.problems.length);
    // Only runs that completed owe exactly one DELETE done at the provider.
    const completedIds = new Set(checks.filter((c) => c.status === 'COMPLETED').map((c) => c.id));
    const audit = await auditDeletes(chaos, planned.filter((p) => completedIds.has(p.id!)), ['worker-kill']);
    const seqProblems = broken.filter((c) => c.problems.some((m) => m.startsWith('seq') || m.startsWith('duplicate'))).length;
    const losses = notEnded.length + seqProblems + audit.duplicates.length + audit.missing.length;
    const byKind = KINDS.map((k) => `${k} ${checks.filter((c) => c.kind === k && c.status === 'COMPLETED').length}/${planned.filter((p) => p.kind === k).length}`);
    const alreadyAbsent = checks.filter((c) => c.alreadyAbsent).length;

    report('worker-kills', [
      `did: ${P.runs} runs of ${KINDS.length} kinds started over ${P.startMs / 1000} s (${chaos.split ? 'API and worker apart, Postgres' : 'one `all` process, PGlite: each kill also took the API down'}); ` +
        `${kills.length} SIGKILLs of the ${chaos.workerRole} process at ${kills.map((k) => `${(k.at / 1000).toFixed(1)}s (runs in flight ${k.runningBefore}, down ${k.downMs} ms, restart ${k.restartMs} ms)`).join(', ')}; ` +
        `${startRetries} start requests retried with their Idempotency-Key; ${chaos.provider.calls.length} provider calls, ${chaos.provider.calls.filter((c) => c.cutOff).length} cut off in flight`,
      `checked: every run terminal and COMPLETED (completed: ${byKind.join(', ')}; ${alreadyAbsent} DELETEs completed already_absent after a kill lost their 204); seq contiguous from 1, no gap or duplicate, each transition leaving the state the last one entered; ` +
        `per DELETE path one 2xx and no more calls than the attempt Temporal recorded as completed (${audit.paths} paths, ${audit.answered2xx} delivered 2xx; Temporal completed ${attemptsLine(audit)}, ${audit.explainedRepeats} re-sent (404) after a kill between answer and retry, ${audit.duplicates.length} unexplained, ${audit.cutOff} DELETEs cut off and retried)`,
      `runs=${P.runs} transitions=${transitions} kills=${kills.length} ended=${P.runs - notEnded.length}/${P.runs} completed=${checks.filter((c) => c.status === 'COMPLETED').length} ` +
        `broken-histories=${seqProblems} duplicate-deletes=${audit.duplicates.length} already-absent=${alreadyAbsent} failed=${checks.filter((c) => c.status === 'FAILED').length} losses=${losses} (all started in ${(startedAll / 1000).toFixed(1)} s, all ended by ${(endedAt / 1000).toFixed(1)} s)`,
    ]);

    const v = new Violations();
    v.check('every planned kill happened', kills.length === P.kills, `${kills.length} of ${P.kills}`);
    v.check('a kill landed among runs in flight', kills.some((k) => k.runningBefore !== 0), 'every kill found no run in flight');
    v.add('runs that never ended', notEnded);
    v.add('runs not COMPLETED (0 FAILED required under kills) or with a broken history', broken.map((c) => `${c.kind} ${c.id}: ${c.problems.join('; ')}`));
    v.add('DELETEs done twice, or re-sent after their 2xx with no kill in between', audit.duplicates);
    v.add('completed DELETE runs whose DELETE was never done (no 2xx)', audit.missing);
    expect(v.list).toEqual([]);
    expect(losses).toBe(0);
  }));
});
