import { ChaosStack, sleep } from './support/chaos-stack';
import { checkStream, followStream, type StreamClient } from './support/sse';
import { mode, planRun, type PlannedRun, report, Violations } from './support/workload';

/**
 * Scenario 2: SSE clients follow long runs (dbhost operation waits polling
 * every second: 8 to 14 transitions each) while the API process is SIGKILLed
 * and restarted under them. Clients reconnect with Last-Event-ID, as an
 * EventSource does. On PGlite the API and the worker are one process, so each
 * kill also stops the runs for a while; on Postgres the worker keeps projecting
 * transitions while the API is down, and the reconnect must deliver them.
 */
const P =
  mode === 'full'
    ? { runs: 30, clientsPerRun: 3, kills: 4, reads: [8, 14], downMs: 1_500, gapMs: 2_500 }
    : { runs: 8, clientsPerRun: 2, kills: 2, reads: [8, 12], downMs: 1_000, gapMs: 2_000 };

jest.setTimeout(300_000);

describe(`chaos: API SIGKILLed under ${P.runs * P.clientsPerRun} SSE clients (${mode})`, () => {
  const chaos = new ChaosStack();

  beforeAll(() => chaos.start('api-kill'));
  afterAll(() => chaos.stop());

  it('every client sees every seq once, in order, then one terminal event', () =>
    chaos.guard(async () => {
      const t0 = Date.now();
      const planned: PlannedRun[] = Array.from({ length: P.runs }, (_, i) =>
        planRun(chaos, 'wait', { reads: P.reads[0] + (i % (P.reads[1] - P.reads[0] + 1)), pollInterval: 1 }),
      );
      for (const p of planned) p.id = (await chaos.startRun(p.workflowType, p.input)).id;

      // The first client of each run connects now; the others join after the first kill, from scratch.
      const clients: Array<Promise<StreamClient>> = planned.map((p) => followStream(chaos, p.id!));
      const late: Array<Promise<StreamClient>> = [];

      const kills: Array<{ at: number; openStreams: number; restartMs: number }> = [];
      for (let k = 0; k < P.kills; k++) {
        await sleep(P.gapMs);
        const at = Date.now();
        const restart = await chaos.kill(chaos.apiRole, 'api-kill');
        await sleep(P.downMs);
        const r0 = Date.now();
        await restart();
        kills.push({ at: at - t0, openStreams: 0, restartMs: Date.now() - r0 });
        if (k === 0) for (let c = 1; c < P.clientsPerRun; c++) for (const p of planned) late.push(followStream(chaos, p.id!));
      }
      const all = await Promise.all([...clients, ...late]);
      chaos.assertNoCrash('api-kill-streams');
      const finishedAt = Date.now() - t0;

      // A kill cut a stream when that stream dropped within a second and a half of it.
      for (const kill of kills) {
        kill.openStreams = all.reduce((n, c) => n + c.drops.filter((d) => d.at - t0 >= kill.at && d.at - t0 <= kill.at + 1_500).length, 0);
      }

      const runs = new Map<string, { run: any; history: any[] }>();
      for (const p of planned) runs.set(p.id!, await chaos.readRun(p.id!));
      const problems: string[] = [];
      let delivered = 0;
      for (const client of all) {
        const { run, history } = runs.get(client.runId)!;
        delivered += client.events.length;
        for (const problem of checkStream(client, run, history)) problems.push(`${client.runId}: ${problem}`);
      }
      const notCompleted = [...runs.values()].filter((r) => r.run.status !== 'COMPLETED').map((r) => `${r.run.workflow_id} ${r.run.status}`);
      const transitions = [...runs.values()].reduce((n, r) => n + r.history.length, 0);
      const drops = all.reduce((n, c) => n + c.drops.length, 0);
      const resumed = all.reduce((n, c) => n + c.resumedFrom.filter((id) => id !== '(none)').length, 0);
      const stalls = all.reduce((n, c) => n + c.stalls, 0);
      const missed = all.reduce((n, c) => {
        const seen = new Set(c.events.filter((e) => e.event === 'transition').map((e) => e.data.seq));
        return n + runs.get(c.runId)!.history.filter((t) => !seen.has(t.seq)).length;
      }, 0);
      const duplicated = all.reduce((n, c) => {
        const seqs = c.events.filter((e) => e.event === 'transition').map((e) => e.data.seq);
        return n + seqs.length - new Set(seqs).size;
      }, 0);

      report('api-kill-streams', [
        `did: ${P.runs} dbhost waits (${P.reads[0]}-${P.reads[1]} polls, 1 s apart), ${all.length} SSE clients (${clients.length} from the start, ${late.length} joining after the first kill); ` +
          `${kills.length} SIGKILLs of the ${chaos.apiRole} process${chaos.split ? '' : ' (PGlite: API and worker together)'} at ${kills.map((k) => `${(k.at / 1000).toFixed(1)}s (${k.openStreams} streams cut, down ${P.downMs} ms, restart ${k.restartMs} ms)`).join(', ')}`,
        `checked: each client saw seq 1..n of its run exactly once and in order, each event equal to the history row, then one terminal event (id n) and the server closed; ` +
          `${drops} dropped connections, ${resumed} reconnects with Last-Event-ID, ${stalls} stalls (silent > 8 s), every run COMPLETED`,
        `runs=${P.runs} clients=${all.length} transitions=${transitions} events-delivered=${delivered} kills=${kills.length} missed=${missed} duplicated=${duplicated} ` +
          `losses=${missed + duplicated + problems.length} (all streams ended by ${(finishedAt / 1000).toFixed(1)} s)`,
      ]);

      const v = new Violations();
      v.check('every planned kill happened', kills.length === P.kills, `${kills.length} of ${P.kills}`);
      // Each kill must have cut live streams, or it tested nothing.
      v.add('kills that cut no stream', kills.filter((k) => k.openStreams === 0).map((k) => `at ${k.at} ms`));
      v.add('runs not COMPLETED', notCompleted);
      v.add('stream clients that missed, repeated or misordered events', problems);
      v.check('no stream went silent', stalls === 0, `${stalls} stalls`);
      v.check('nothing missed or duplicated', missed + duplicated === 0, `${missed} missed, ${duplicated} duplicated`);
      expect(v.list).toEqual([]);
    }));
});
