import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import type { CallerInit, CallerReply, CallerRequest, CallerSide } from './caller-process';
import type { Sample } from './stats';

export interface Callers {
  /** Runs `n` calls of one side in the callers' process, `concurrency` at a time. */
  measure(side: CallerSide, n: number, concurrency: number): Promise<Sample & { workflowIds: string[] }>;
  close(): Promise<void>;
}

/** Forks bench/lib/caller-process.ts (compiled next to this file) and waits until it is connected. */
export async function startCallers(init: CallerInit): Promise<Callers> {
  const child: ChildProcess = fork(path.join(__dirname, 'caller-process.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, { resolve: (reply: CallerReply) => void; reject: (err: Error) => void }>();
  let next = 0;
  // A caller process that dies fails the chunks it owed, rather than leaving the benchmark waiting.
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const { reject } of pending.values()) reject(new Error(`caller process exited (${signal ?? code}) during a measurement`));
      pending.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(`caller process: unexpected ${String(m)}`))));
    child.once('exit', (code) => reject(new Error(`caller process exited with ${code} before it was ready`)));
    child.send(init);
  });
  child.on('message', (m) => {
    const reply = m as CallerReply;
    pending.get(reply.id)?.resolve(reply);
    pending.delete(reply.id);
  });
  return {
    async measure(side, n, concurrency) {
      const id = next++;
      const reply = await new Promise<CallerReply>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, side, n, concurrency } satisfies CallerRequest);
      });
      if (reply.error) throw new Error(`caller process: ${reply.error}`);
      return { label: side.kind, latenciesMs: reply.latenciesMs, wallMs: reply.wallMs, workflowIds: reply.workflowIds };
    },
    async close() {
      child.disconnect();
      await exited;
    },
  };
}
