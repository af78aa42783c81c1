import { randomBytes } from 'node:crypto';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../../activities/payload-codec';
import { request } from './http';
import { benchStartOptions } from './start-options';
import { measure, type Side } from './stats';

/** What the load generator does, one call per task. */
export type LoadKind = 'api-start' | 'direct-start' | 'auth-me';

export interface LoadConfig {
  apiUrl: string;
  token: string;
  organization: string;
  temporalAddress: string;
  namespace: string;
  /** Hex; the direct client encrypts its payloads as a service holding the key would. */
  masterKeyHex: string;
  workflowType: string;
  initialData: Record<string, unknown>;
}

interface Order {
  id: number;
  kind: LoadKind;
  n: number;
  concurrency: number;
}

type Done =
  | {
      id: number;
      latenciesMs: number[];
      wallMs: number;
      /** The workflow ids the tasks started. */
      started: string[];
    }
  | { id: number; error: string };

const ROLE = 'bench-load-generator';

/**
 * The benchmark's callers, in a thread of their own: an SDK calling the API, or a service starting
 * runs with the Temporal client, is never in the process it calls, so neither side's client work
 * (fetch, gRPC, the payload codec) may queue on the event loop the API and the worker share. Each
 * latency is timed in this thread, around the call only.
 */
export class LoadGenerator {
  private readonly waiting = new Map<number, (done: Done) => void>();
  private nextId = 0;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (done: Done) => {
      this.waiting.get(done.id)?.(done);
      this.waiting.delete(done.id);
    });
  }

  static async start(config: LoadConfig): Promise<LoadGenerator> {
    const worker = new Worker(__filename, { workerData: { role: ROLE, config } });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    return new LoadGenerator(worker);
  }

  /** A side of sideBySide whose tasks run in the thread; `onStarted` gets the ids of the runs they start. */
  side(label: string, kind: LoadKind, onStarted: (ids: string[]) => void = () => undefined): Side {
    return {
      label,
      run: async (n, concurrency) => {
        const id = this.nextId++;
        const done = await new Promise<Done>((resolve) => {
          this.waiting.set(id, resolve);
          this.worker.postMessage({ id, kind, n, concurrency } satisfies Order);
        });
        if ('error' in done) throw new Error(`load generator, ${label}: ${done.error}`);
        onStarted(done.started);
        return { latenciesMs: done.latenciesMs, wallMs: done.wallMs };
      },
    };
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

async function serve(config: LoadConfig) {
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.namespace, dataConverter: createDataConverter(Buffer.from(config.masterKeyHex, 'hex')) });
  const tasks: Record<LoadKind, () => Promise<string | undefined>> = {
    'api-start': async () => {
      const body = await request(config.apiUrl, config.token, '/api/workflows/start', {
        body: { workflow_type: config.workflowType, initial_data: config.initialData },
        expect: 201,
      });
      return body.workflow_id as string;
    },
    'direct-start': async () => {
      const id = `wf_direct_${randomBytes(10).toString('hex')}`;
      await client.workflow.start(config.workflowType, benchStartOptions(config.organization, config.workflowType, id, config.initialData));
      return id;
    },
    'auth-me': async () => {
      await request(config.apiUrl, config.token, '/api/auth/me');
      return undefined;
    },
  };
  parentPort!.on('message', ({ id, kind, n, concurrency }: Order) => {
    const started: string[] = [];
    measure(kind, n, concurrency, async () => {
      const workflowId = await tasks[kind]();
      if (workflowId) started.push(workflowId);
    }).then(
      (sample) => parentPort!.postMessage({ id, latenciesMs: sample.latenciesMs, wallMs: sample.wallMs, started } satisfies Done),
      (err: unknown) => parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies Done),
    );
  });
  parentPort!.postMessage('ready');
}

if (!isMainThread && workerData?.role === ROLE) void serve(workerData.config as LoadConfig);
