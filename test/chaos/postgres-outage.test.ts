import { ChaosStack, type HttpResult, sleep } from './support/chaos-stack';
import { checkStream, followStream, type StreamClient } from './support/sse';
import { attemptsLine, auditDeletes, checkRun, DELETE, mode, planRun, type PlannedRun, report, type RunCheck, Violations } from './support/workload';

/**
 * Scenario 3 (Postgres only: jest.config.js does not collect this file without
 * DATABASE_URL, and the chaos global setup prints why): the stack reaches
 * Postgres through a TCP proxy in this process. For each outage the suite
 * starts long dbhost waits (each followed by an SSE client) and atomic runs
 * whose provider calls are in flight, makes the database unreachable, probes
 * the API meanwhile, restores it, and checks that the projection caught up
 * with Temporal and nothing was lost.
 *   cut        listener closed, open connections reset: connections are refused
 *   blackhole  (full form only) connections accepted and held, no byte passes: a partition
 */
const P =
  mode === 'full'
    ? {
        outages: [
          { kind: 'cut', ms: 30_000 },
          { kind: 'blackhole', ms: 30_000 },
        ] as const,
        waits: 12,
        atomics: 24,
        deadlineMs: 180_000,
      }
    : { outages: [{ kind: 'cut', ms: 10_000 }] as const, waits: 4, atomics: 8, deadlineMs: 120_000 };
/** A probe not answered within this is a hang (the API must answer, whatever it answers). */
const HANG_MS = 10_000;

jest.setTimeout(P.outages.reduce((n, o) => n + o.ms + P.deadlineMs + 60_000, 120_000));

interface Probe {
  what: string;
  result: HttpResult;
}

function describeProbes(probes: Probe[]): string {
  const byWhat = new Map<string, HttpResult[]>();
  for (const p of probes) byWhat.set(p.what, [...(byWhat.get(p.what) ?? []), p.result]);
  return [...byWhat.entries()]
    .map(([what, results]) => {
      const statuses = new Map<string, number>();
      for (const r of results) {
        const key = r.hung ? 'HUNG' : r.status === 0 ? `no answer (${r.error})` : `${r.status} ${r.body?.error?.code ?? r.body?.status ?? ''}`.trim();
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
      return `${what}: ${[...statuses].map(([k, n]) => `${n}× ${k}`).join(', ')} (slowest ${Math.max(...results.map((r) => r.ms))} ms)`;
    })
    .join('; ');
}

describe(`chaos: Postgres unreachable during runs (${P.outages.map((o) => `${o.kind} ${o.ms / 1000} s`).join(', ')}; ${mode})`, () => {
  const chaos = new ChaosStack();

  beforeAll(() => chaos.start('pg-outage'));
  afterAll(() => chaos.stop());

  for (const outage of P.outages) {
    it(`${outage.kind} for ${outage.ms / 1000} s: runs finish, the projection catches up, nothing lost; the API answers 503 meanwhile, never hangs`, () =>
      chaos.guard(async () => {
        const proxy = chaos.proxy;
        if (!proxy) throw new Error('no database proxy: this scenario needs DATABASE_URL');
        // Long waits first (they poll across the outage), each followed by a stream client.
        const waits: PlannedRun[] = Array.from({ length: P.waits }, () => planRun(chaos, 'wait', { reads: 6, pollInterval: 1 }));
        for (const p of waits) p.id = (await chaos.startRun(p.workflowType, p.input)).id;
        const streams: Array<Promise<StreamClient>> = waits.map((p) => followStream(chaos, p.id!, { deadlineMs: outage.ms + P.deadlineMs }));
        await sleep(2_500);

        // Then atomic runs whose provider calls are in flight (held up to 1 s) when the database goes.
        const kinds: PlannedRun['kind'][] = ['delete-ok', 'delete-flaky', 'resources', 'endpoints'];
        const atomics = Array.from({ length: P.atomics }, (_, i) => planRun(chaos, kinds[i % kinds.length]));
        await Promise.all(atomics.map(async (p) => (p.id = (await chaos.startRun(p.workflowType, p.input)).id)));
        const planned = [...waits, ...atomics];

        const cutAt = Date.now();
        if (outage.kind === 'cut') await proxy.cut();
        else proxy.blackhole();
        const probes: Probe[] = [];
        while (Date.now() - cutAt < outage.ms) {
          const round = await Promise.all([
            chaos.request('/api/health', { token: null, timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/health', result })),
            chaos.request(`/api/workflows/${waits[0].id}`, { timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/workflows/{id}', result })),
            chaos.request(`/api/workflows/${waits[0].id}/history`, { timeoutMs: HANG_MS }).then((result) => ({ what: 'GET /api/workflows/{id}/history', result })),
            chaos
              .request('/api/workflows/start', { body: { workflow_type: DELETE, initial_data: planRun(chaos, 'delete-ok').input }, timeoutMs: HANG_MS })
              .then((result) => ({ what: 'POST /api/workflows/start', result })),
          ]);
          probes.push(...round);
          await sleep(500);
        }
        // A start that reached the database before it went and Temporal after is accepted (201):
        // its run is real and must not count as started by a refused request.
        const accepted = probes.filter((p) => p.what.startsWith('POST') && p.result.status === 201).map((p) => String(p.result.body.workflow_id));
        for (const id of accepted) chaos.knownRuns.add(id);
        const callsDuringOutage = chaos.provider.calls.filter((c) => c.arrivedAt >= cutAt).length;
        await proxy.restore();
        const restoredAt = Date.now();
        chaos.disruptions.push({ kind: 'database-cut', from: cutAt, to: restoredAt });
        const hung = probes.filter((p) => p.result.hung);
        // Said now, so it is on record even if the service does not survive the outage.
        report(`postgres-outage (${outage.kind})`, [
          `did: ${P.waits} dbhost waits (polling every 1 s, each followed by an SSE client) and ${P.atomics} atomic runs (esign delete ok/flaky, resource listing, dbhost endpoints) in flight; ` +
            `${outage.kind === 'cut' ? 'cut the database proxy (listener closed, open connections reset)' : 'blackholed the database proxy (connections held open, no byte passing)'} ` +
            `for ${outage.ms / 1000} s; ${probes.length} API probes meanwhile; ${callsDuringOutage} provider calls made during the outage`,
          `probes during the outage: ${describeProbes(probes)}`,
        ]);

        // The atomic runs were all held at their one transition: their ending is the projection catching up.
        const atomicsNotEnded = await chaos.waitAllTerminal(atomics.map((p) => p.id!), P.deadlineMs);
        const caughtUpMs = Date.now() - restoredAt;
        const notEnded = [...atomicsNotEnded, ...(await chaos.waitAllTerminal(waits.map((p) => p.id!), P.deadlineMs))];
        chaos.assertNoCrash(`postgres-outage (${outage.kind})`);
        const clients = await Promise.all(streams);

        const checks: RunCheck[] = [];
        const streamProblems: string[] = [];
        for (const p of planned) {
          if (notEnded.includes(p.id!)) continue;
          const { run, history } = await chaos.readRun(p.id!);
          checks.push(checkRun(p, run, history));
          const client = clients.find((c) => c.runId === p.id);
          if (client) streamProblems.push(...checkStream(client, run, history).map((m) => `${p.id}: ${m}`));
        }
        // Temporal's own view of the organization's executions: every one we started, all completed, none other.
        const executions = JSON.parse(
          await chaos.temporal.cli(['workflow', 'list', '--query', `EngineOrganizationUuid="${chaos.organization}"`, '--limit', '1000', '-o', 'json']),
        ) as Array<{ execution: { workflowId: string }; status: string }>;
        const ours = new Set(planned.map((p) => p.id!));
        const mine = executions.filter((e) => ours.has(e.execution.workflowId));
        const notInTemporal = planned.filter((p) => !mine.some((e) => e.execution.workflowId === p.id)).map((p) => p.id);
        const temporalNotCompleted = mine.filter((e) => !/COMPLETED$/.test(String(e.status))).map((e) => `${e.execution.workflowId} ${e.status}`);
        // Starts refused during the outage must have started nothing: executions of the organization after cutAt that are not ours.
        const strays = executions.filter((e) => !ours.has(e.execution.workflowId) && !chaos.knownRuns.has(e.execution.workflowId));
        for (const p of planned) chaos.knownRuns.add(p.id!);
        const audit = await auditDeletes(chaos, planned, ['worker-kill', 'temporal-restart']);

        const unclear = new Map<string, number>();
        for (const p of probes) {
          if (p.result.hung || (p.result.status === 503 && typeof p.result.body?.error?.message === 'string')) continue;
          if (p.what.startsWith('POST') && p.result.status === 201) continue;
          const key = `${p.what} answered ${p.result.status} ${p.result.body?.error?.code ?? p.result.error ?? ''}`;
          unclear.set(key, (unclear.get(key) ?? 0) + 1);
        }
        const transitions = checks.reduce((n, c) => n + c.transitions, 0);
        const broken = checks.filter((c) => c.problems.length);
        const failedRuns = checks.filter((c) => c.status !== 'COMPLETED');
        const lost = notEnded.length + checks.filter((c) => c.problems.some((m) => m.startsWith('seq') || m.startsWith('duplicate'))).length;
        const losses = lost + notInTemporal.length + audit.duplicates.length + audit.missing.length + streamProblems.length;

        report(`postgres-outage (${outage.kind})`, [
          `checked: every run terminal and COMPLETED in the projection and in Temporal, histories contiguous, streams saw every seq once then one end, ` +
            `one delivered DELETE per path (${audit.paths} paths, ${audit.answered2xx} delivered 2xx; Temporal completed ${attemptsLine(audit)}), no execution from refused starts (${strays.length}); ` +
            `the held runs caught up ${(caughtUpMs / 1000).toFixed(1)} s after the database came back` +
            (failedRuns.length ? `; FAILED runs: ${failedRuns.map((c) => `${c.kind} (${c.problems.join('; ').slice(0, 160)})`).join(' | ')}` : ''),
          `runs=${planned.length} transitions=${transitions} outages=1 (${outage.kind}, ${outage.ms / 1000} s) probes=${probes.length} hung=${hung.length} ` +
            `ended=${planned.length - notEnded.length}/${planned.length} completed=${checks.length - failedRuns.length} failed=${checks.filter((c) => c.status === 'FAILED').length} losses=${losses}`,
        ]);

        const v = new Violations();
        // Nothing lost, nothing failed because of the outage.
        v.add('runs that never ended', notEnded);
        v.add('runs not COMPLETED or with a broken history', broken.map((c) => `${c.kind} ${c.id}: ${c.problems.join('; ')}`));
        v.add('stream clients that missed, repeated or misordered events', streamProblems);
        v.add('runs Temporal does not know', notInTemporal);
        v.add('executions Temporal does not show COMPLETED', temporalNotCompleted);
        v.add('DELETEs answered 2xx twice', audit.duplicates);
        v.add('completed DELETE runs whose DELETE was never answered 2xx', audit.missing);
        v.add('executions started by requests the API refused', strays.map((e) => e.execution.workflowId));
        // The API never hung, and said clearly that it is unavailable: 503 with an error body.
        v.add(`API probes not answered within ${HANG_MS} ms (hangs)`, hung.map((p) => p.what));
        v.add('API probes not answered 503 with an error message', [...unclear].map(([k, n]) => `${n}× ${k}`));
        v.check('the API was probed', probes.length > 0);
        expect(v.list).toEqual([]);
      }));
  }
});
