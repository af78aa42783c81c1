import { Worker } from 'node:worker_threads';
import { loadConfig } from '../../src/config';
import { lowerRunThreadPriority } from '../../src/worker/run-thread-priority';
import { threadsOf } from '../support/threads';

/** This process's threads by name, with their nice values. */
function niceByName(): Map<string, number[]> {
  const byName = new Map<string, number[]>();
  for (const { name, nice } of threadsOf('self')) byName.set(name, [...(byName.get(name) ?? []), nice]);
  return byName;
}

describe('RUN_THREADS_NICE', () => {
  const env = (value?: string) => (value === undefined ? {} : { RUN_THREADS_NICE: value });

  it('is 0 (threads left alone) unless set, takes 0 to 19, and refuses anything else naming the variable', () => {
    expect(loadConfig(env()).runThreadsNice).toBe(0);
    expect(loadConfig(env('19')).runThreadsNice).toBe(19);
    for (const bad of ['20', '-1', '5.5', 'low']) expect(() => loadConfig(env(bad))).toThrow(/RUN_THREADS_NICE/);
  });
});

(process.platform === 'linux' ? describe : describe.skip)('lowerRunThreadPriority', () => {
  const workers: Worker[] = [];
  afterAll(() => Promise.all(workers.map((w) => w.terminate())));

  const started = (worker: Worker) => {
    workers.push(worker);
    return new Promise((resolve) => worker.once('online', resolve));
  };

  it('lowers the threads named as the runs\' threads, and no other', async () => {
    // An unnamed Node worker is named "WorkerThread", as the SDK's workflow threads are.
    await started(new Worker('setInterval(() => {}, 1000)', { eval: true }));
    await started(new Worker('setInterval(() => {}, 1000)', { eval: true, name: 'not-a-run-thread' }));
    const before = niceByName();
    expect(lowerRunThreadPriority(0)).toBe(0);
    expect(niceByName()).toEqual(before);

    expect(lowerRunThreadPriority(7)).toBeGreaterThanOrEqual(1);
    const after = niceByName();
    expect(after.get('WorkerThread')).toEqual(before.get('WorkerThread')!.map(() => 7));
    expect(after.get('not-a-run-thread')).toEqual(before.get('not-a-run-thread'));
    expect(after.get('MainThread')).toEqual(before.get('MainThread'));
  });
});
