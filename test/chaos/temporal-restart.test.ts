import { ChaosStack, type HttpResult, sleep } from './support/chaos-stack';
import { attemptsLine, auditDeletes, checkRun, DELETE, KINDS, mode, planMixed, planRun, report, type RunCheck, Violations } from './support/workload';

/**
 * Scenario 4: the Temporal server restarted under runs in flight. The chaos
 * stack's dev server keeps its state in a SQLite file (--db-filename), so a
 * restart on the same port keeps every execution, timer and task; the API and
 * the worker are left alone and must reconnect by themselves. Meanwhile the
 * API is probed: reads come from the projection and must keep answering; what
 * needs Temporal must fail clearly, never hang.
 */
const P =
  mode === 'full'
    ? { runs: 80, restarts: [{ signal: 'SIGTERM', downMs: 5_000 }, { signal: 'SIGKILL', downMs: 25_000 }] as const, deadlineMs: 240_000 }
    : { runs: 24, restarts: [{ signal: 'SIGKILL', downMs: 3_000 }] as const, deadlineMs: 150_000 };
/** A probe not answered within this is a hang: longer than any restart, so a request waiting for Temporal to return is not one. */
const HANG_MS = 40_000;

jest.setTimeout(P.deadlineMs + 240_000);

describe(`chaos: Temporal server restarted during ${P.runs} runs (${mode})`, () => {
  const chaos = new ChaosStack();

  beforeAll(() => chaos.start('temporal-restart'));
  afterAll(() => chaos.stop());

  it('runs resume and finish COMPLETED with contiguous histories; the API never hangs meanwhile', () =>
    chaos.guard(async () => {
      const t0 = Date.now();
      const planned = planMixed(chaos, P.runs, { reads: 6 });
      const half = Math.ceil(planned.length / 2);
      const probes: Array<{ what: string; result: HttpResult }> = [];
      const restarts: Array<{ at: number; signal: string; downMs: number; upMs: number }> = [];

      const startBatch = (batch: typeof planned) =>
        Promise.all(batch.map(async (p) => (p.id = (await chaos.startRun(p.workflowType, p.input)).id)));
      await startBatch(planned.slice(0, half));
      for (const [i, restart] of P.restarts.entries()) {
        await sleep(1_500);
        const at = Date.now();
        // Probe while Temporal is down (the restart runs alongside).
        const restarting = chaos.restartTemporal(restart.signal, restart.downMs);
        let down = true;
        void restarting.finally(() => (down = false));
        await sleep(300);
        while (down) {
          const round = await Promise.all([
            chaos.request('/api/health', { token: null, timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/health', result })),
            chaos.request(`/api/workflows/${planned[0].id}`, { timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/workflows/{id}', result })),
            chaos.request('/api/workflows?limit=5', { timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/workflows', result })),
            chaos
              .request('/api/workflows/start', { body: { workflow_type: DELETE, initial_data: planRun(chaos, 'delete-ok').input }, timeoutMs: HANG_MS })
              .then((result) => ({ what: 'POST /api/workflows/start', result })),
          ]);
          // Every round sent while Temporal was down counts, however long its answers took.
          probes.push(...round);
          await sleep(500);
        }
        await restarting;
        restarts.push({ at: at - t0, signal: restart.signal, downMs: restart.downMs, upMs: Date.now() - at });
        if (i === 0) await startBatch(planned.slice(half));
      }
      if (!P.restarts.length) await startBatch(planned.slice(half));

      const notEnded = await chaos.waitAllTerminal(planned.map((p) => p.id!), P.deadlineMs);
      chaos.assertNoCrash('temporal-restart');
      const endedAt = Date.now() - t0;

      const checks: RunCheck[] = [];
      for (const p of planned) {
        if (notEnded.includes(p.id!)) continue;
        const { run, history } = await chaos.readRun(p.id!);
        checks.push(checkRun(p, run, history));
      }
      const audit = await auditDeletes(chaos, planned, ['temporal-restart']);
      // Probe starts that Temporal accepted are runs too: they must have ended like the others.
      const probeRuns = probes.filter((p) => p.what.startsWith('POST') && p.result.status === 201).map((p) => p.result.body.workflow_id as string);
      const probeRunsNotEnded = await chaos.waitAllTerminal(probeRuns, 60_000);
      const executions = JSON.parse(
        await chaos.temporal.cli(['workflow', 'list', '--query', `EngineOrganizationUuid="${chaos.organization}"`, '--limit', '1000', '-o', 'json']),
      ) as Array<{ execution: { workflowId: string }; status: string }>;
      const temporalIds = new Set(executions.map((e) => e.execution.workflowId));
      const notInTemporal = planned.filter((p) => !temporalIds.has(p.id!)).map((p) => p.id);
      const temporalNotCompleted = executions.filter((e) => !/COMPLETED$/.test(String(e.status))).map((e) => `${e.execution.workflowId} ${e.status}`);

      const byWhat = new Map<string, HttpResult[]>();
      for (const p of probes) byWhat.set(p.what, [...(byWhat.get(p.what) ?? []), p.result]);
      const describeProbes = [...byWhat.entries()].map(([what, results]) => {
        const statuses = new Map<string, number>();
        for (const r of results) {
          const key = r.hung ? 'HUNG' : r.status === 0 ? `no answer (${r.error})` : `${r.status} ${r.body?.error?.code ?? r.body?.status ?? ''}`.trim();
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        }
        return `${what}: ${[...statuses].map(([k, n]) => `${n}× ${k}`).join(', ')} (slowest ${Math.max(...results.map((r) => r.ms))} ms)`;
      });
      const hung = probes.filter((p) => p.result.hung);
      const transitions = checks.reduce((n, c) => n + c.transitions, 0);
      const broken = checks.filter((c) => c.problems.length);
      const losses = notEnded.length + broken.length + notInTemporal.length + audit.duplicates.length + audit.missing.length + probeRunsNotEnded.length;
      const byKind = KINDS.map((k) => `${k} ${checks.filter((c) => c.kind === k && c.status === 'COMPLETED').length}/${planned.filter((p) => p.kind === k).length}`);

      report('temporal-restart', [
        `did: ${P.runs} runs of ${KINDS.length} kinds (half started before the first restart, half after it); restarted the Temporal dev server (state in --db-filename, same port) ` +
          `${restarts.map((r) => `at ${(r.at / 1000).toFixed(1)}s with ${r.signal}, down ${r.downMs} ms, serving again after ${(r.upMs / 1000).toFixed(1)} s`).join('; ')}; API and worker processes left alone`,
        `probes while Temporal was down: ${describeProbes.join('; ')}`,
        `checked: every run terminal and COMPLETED (${byKind.join(', ')}) in the projection and in Temporal (${executions.length} executions), histories contiguous, ` +
          `one delivered DELETE per path (${audit.paths} paths, ${audit.answered2xx} delivered 2xx; Temporal completed ${attemptsLine(audit)}, ${audit.explainedRepeats} repeats after a restart, ${audit.duplicates.length} unexplained); ` +
          `API and worker never exited; ${probeRuns.length} probe starts accepted, all ended: ${probeRunsNotEnded.length === 0}`,
        `runs=${P.runs} transitions=${transitions} restarts=${restarts.length} probes=${probes.length} hung=${hung.length} ended=${P.runs - notEnded.length}/${P.runs} ` +
          `completed=${checks.filter((c) => c.status === 'COMPLETED').length} failed=${checks.filter((c) => c.status === 'FAILED').length} losses=${losses} (all ended by ${(endedAt / 1000).toFixed(1)} s)`,
      ]);

      const v = new Violations();
      v.check('every planned restart happened', restarts.length === P.restarts.length);
      v.add('runs that never ended', notEnded);
      v.add('runs not COMPLETED or with a broken history', broken.map((c) => `${c.kind} ${c.id}: ${c.problems.join('; ')}`));
      v.add('runs Temporal does not know', notInTemporal);
      v.add('executions Temporal does not show COMPLETED', temporalNotCompleted);
      v.add('DELETEs answered 2xx twice with no restart in between', audit.duplicates);
      v.add('completed DELETE runs whose DELETE was never answered 2xx', audit.missing);
      v.add('runs started by probes that never ended', probeRunsNotEnded);
      // Never a hang; reads come from the projection and keep answering.
      v.add(`API probes not answered within ${HANG_MS} ms (hangs)`, hung.map((p) => `${p.what} after ${p.result.ms} ms`));
      const reads = probes.filter((p) => p.what.startsWith('GET /api/workflows'));
      v.add('reads (served from the projection) not answered 200', reads.filter((p) => p.result.status !== 200).map((p) => `${p.what}: ${p.result.status}`));
      // Health names Temporal as down; a start fails clearly (503) or is accepted (201), never anything else.
      const health = probes.filter((p) => p.what === 'GET /api/health');
      v.add('health not 503 naming temporal', health.filter((p) => p.result.status !== 503 || p.result.body?.temporal !== 'unavailable').map((p) => `${p.result.status} ${JSON.stringify(p.result.body)}`));
      const starts = probes.filter((p) => p.what.startsWith('POST'));
      v.add('starts neither accepted (201) nor refused clearly (503)', starts.filter((p) => ![201, 503].includes(p.result.status)).map((p) => `${p.result.status} after ${p.result.ms} ms ${JSON.stringify(p.result.body ?? p.result.error)}`));
      expect(v.list).toEqual([]);
    }));
});
