import fs from 'node:fs';
import os from 'node:os';

/**
 * The threads that execute runs, by the names their creators give them: the TypeScript SDK's
 * workflow threads (unnamed Node workers, which Node names "WorkerThread") and the Rust core's
 * (its Tokio runtime and its workflow processing; Linux keeps the first 15 bytes of a name).
 */
export const RUN_THREAD_NAMES: readonly string[] = ['WorkerThread', 'tokio-runtime-w', 'workflow-proces'];

/**
 * Where the API and the worker share a process (`main.js all` with RUN_THREADS_NICE set), lowers
 * the CPU priority of the threads that execute runs, so that on a busy machine the API's requests
 * (the main thread) and the Temporal server come before them: a start's answer waits for no
 * run's workflow task. The main thread keeps its priority; it also runs activities and the
 * database client, which is why the steps of a run get slower (README, Performance). Raising a
 * thread's nice value needs no privilege; threads these create later inherit it. Linux only
 * (per-thread priorities in /proc); elsewhere nothing changes. Returns how many threads it lowered.
 */
export function lowerRunThreadPriority(nice: number): number {
  if (nice === 0 || process.platform !== 'linux') return 0;
  let lowered = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    let name: string;
    try {
      name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    if (!RUN_THREAD_NAMES.includes(name)) continue;
    try {
      // On Linux, setpriority(PRIO_PROCESS, tid) sets that one thread's nice value.
      os.setPriority(Number(tid), nice);
      lowered++;
    } catch {
      // ended meanwhile
    }
  }
  return lowered;
}
