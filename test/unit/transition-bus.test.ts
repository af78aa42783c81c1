import type { DatabaseHandle } from '../../db/client';
import type { Logger } from '../../src/logger';
import type { RunsService } from '../../src/runs/runs.service';
import { type RunRow, TransitionBus, type TransitionRow } from '../../src/runs/transition-bus.service';

/** The bus against an in-memory run: counts the reads it makes and lets a test commit and notify. */
async function harness() {
  const rows: TransitionRow[] = [];
  let run = { isTerminal: false, lastSeq: 0 } as RunRow;
  let notify!: (payload: string) => void;
  const runs = {
    transitionsAfter: jest.fn(async (_id: string, seq: number) => rows.filter((r) => r.seq > seq)),
    findRun: jest.fn(async () => run),
  };
  const database = {
    listen: async (_channel: string, onMessage: (payload: string) => void) => {
      notify = onMessage;
      return async () => undefined;
    },
  };
  const log = { warn: jest.fn() };
  const bus = new TransitionBus(runs as unknown as RunsService, database as unknown as DatabaseHandle, log as unknown as Logger);
  await bus.onModuleInit();
  return {
    bus,
    runs,
    log,
    notify: (payload: string) => notify(payload),
    commit(seq: number, terminal = false) {
      rows.push({ seq } as TransitionRow);
      run = { isTerminal: terminal, lastSeq: seq } as RunRow;
    },
    /** A stream as RunStreamService makes it: it unsubscribes at the end. */
    subscribe(workflowId: string, seen: number) {
      const got = { seqs: [] as number[], ends: 0 };
      const unsubscribe = bus.subscribe(workflowId, 'org_a', {
        seen,
        transition: (row) => got.seqs.push(row.seq),
        end: () => {
          got.ends += 1;
          unsubscribe();
        },
      });
      return got;
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('TransitionBus', () => {
  afterEach(() => jest.useRealTimers());

  it('1,000 streams of one run share each read and each get every transition once, in order, then the end', async () => {
    const h = await harness();
    h.commit(1);
    h.commit(2);
    const streams = Array.from({ length: 1000 }, (_, i) => ({ seen: i % 3, got: h.subscribe('wf_x', i % 3) }));
    await settle();
    // The first subscribe starts a read; the 999 during it are served by one more.
    expect(h.runs.transitionsAfter).toHaveBeenCalledTimes(2);

    h.commit(3);
    h.notify('wf_x:3');
    await settle();
    expect(h.runs.transitionsAfter).toHaveBeenCalledTimes(3);
    // Not terminal: the run row is not re-read.
    expect(h.runs.findRun).toHaveBeenCalledTimes(2);

    h.commit(4, true);
    h.notify('wf_x:4t');
    await settle();
    expect(h.runs.transitionsAfter).toHaveBeenCalledTimes(4);
    expect(h.runs.findRun).toHaveBeenCalledTimes(3);
    for (const s of streams) expect(s.got).toEqual({ seqs: range(s.seen + 1, 4), ends: 1 });

    // Every stream has left: no reader is left to wake.
    h.notify('wf_x:4t');
    await settle();
    expect(h.runs.transitionsAfter).toHaveBeenCalledTimes(4);
    expect(h.log.warn).not.toHaveBeenCalled();
    await h.bus.onModuleDestroy();
  });

  it('an old payload without the terminal marker still delivers, and the shared re-check ends the streams', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const h = await harness();
    const streams = [h.subscribe('wf_y', 0), h.subscribe('wf_y', 0)];
    await settle();
    h.commit(1, true);
    h.notify('wf_y:1');
    await settle();
    expect(streams).toEqual([
      { seqs: [1], ends: 0 },
      { seqs: [1], ends: 0 },
    ]);
    const reads = h.runs.findRun.mock.calls.length;
    await jest.advanceTimersByTimeAsync(5_000);
    await settle();
    expect(streams).toEqual([
      { seqs: [1], ends: 1 },
      { seqs: [1], ends: 1 },
    ]);
    expect(h.runs.findRun).toHaveBeenCalledTimes(reads + 1);
    await h.bus.onModuleDestroy();
  });
});
