import fs from 'node:fs';
import { stackEnv } from '../support/api';
import { STACK_RUN_THREADS_NICE } from '../support/stack';
import { RUN_THREAD_NAMES } from '../../src/worker/run-thread-priority';
import { threadsOf } from '../support/threads';

interface WorkerRunning {
  msg: string;
  pid: number;
  run_threads_lowered: number;
  run_threads_nice: number;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Per-thread priorities are Linux's; the stack's process is on this machine.
(process.platform === 'linux' ? describe : describe.skip)('the priority of the threads that execute runs (RUN_THREADS_NICE)', () => {
  const running = () =>
    fs
      .readFileSync(stackEnv.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"worker running"'))
      .map((line) => JSON.parse(line) as WorkerRunning)
      .filter((entry) => alive(entry.pid))
      .at(-1)!;

  it('is lowered where the API and the worker share a process, for the SDK\'s workflow threads and the core\'s, and the main thread keeps its own', () => {
    const entry = running();
    expect(entry).toBeDefined();
    const threads = threadsOf(entry.pid);
    const runThreads = threads.filter((t) => RUN_THREAD_NAMES.includes(t.name));
    if (stackEnv.split) {
      // A worker process of its own serves no requests: nothing to give way to.
      expect(entry.run_threads_lowered).toBe(0);
      expect(runThreads.every((t) => t.nice === 0)).toBe(true);
      return;
    }
    const nice = STACK_RUN_THREADS_NICE;
    expect(entry).toMatchObject({ run_threads_nice: nice });
    // All three kinds exist under these names: if the SDK renames one, this fails instead of the priority silently staying.
    for (const name of RUN_THREAD_NAMES) {
      expect(runThreads.filter((t) => t.name === name).map((t) => t.nice)).toEqual(expect.arrayContaining([nice]));
    }
    expect(runThreads.every((t) => t.nice === nice)).toBe(true);
    expect(entry.run_threads_lowered).toBeGreaterThanOrEqual(3);
    expect(threads.find((t) => t.name === 'MainThread')?.nice).toBe(0);
  });
});
