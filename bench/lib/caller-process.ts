/**
 * The start benchmark's callers, in a process of their own (bench/lib/callers.ts forks it): a
 * service calling POST /api/workflows/start, and a service starting runs with the Temporal client
 * directly. Both are other processes than the engine in production; in the engine's process their
 * clients' work (HTTP, gRPC) would be charged to the engine's event loop.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { createDataConverter } from '../../activities/payload-codec';
import { request } from './http';
import { measure } from './stats';

export interface CallerInit {
  apiUrl: string;
  token: string;
  temporalAddress: string;
  namespace: string;
  masterKeyHex: string;
}

export type CallerSide =
  | { kind: 'api-start'; workflowType: string; initialData: Record<string, unknown> }
  | { kind: 'direct-start'; workflowType: string; options: WorkflowStartOptions }
  | { kind: 'api-get'; path: string };

export interface CallerRequest {
  id: number;
  side: CallerSide;
  n: number;
  concurrency: number;
}

export interface CallerReply {
  id: number;
  latenciesMs: number[];
  wallMs: number;
  /** The runs this chunk started. */
  workflowIds: string[];
  error?: string;
}

async function main() {
  const init = await new Promise<CallerInit>((resolve) => process.once('message', (m) => resolve(m as CallerInit)));
  const connection = await Connection.connect({ address: init.temporalAddress });
  const client = new Client({ connection, namespace: init.namespace, dataConverter: createDataConverter(Buffer.from(init.masterKeyHex, 'hex')) });

  const task = (side: CallerSide, started: string[]) => async () => {
    if (side.kind === 'api-start') {
      const body = await request(init.apiUrl, init.token, '/api/workflows/start', {
        body: { workflow_type: side.workflowType, initial_data: side.initialData },
        expect: 201,
      });
      started.push(body.workflow_id);
    } else if (side.kind === 'direct-start') {
      const workflowId = `wf_direct_${randomBytes(10).toString('hex')}`;
      await client.workflow.start(side.workflowType, { ...side.options, workflowId });
      started.push(workflowId);
    } else {
      await request(init.apiUrl, init.token, side.path);
    }
  };

  process.on('message', (message) => {
    const { id, side, n, concurrency } = message as CallerRequest;
    const started: string[] = [];
    measure(side.kind, n, concurrency, task(side, started)).then(
      (s) => process.send!({ id, latenciesMs: s.latenciesMs, wallMs: s.wallMs, workflowIds: started } satisfies CallerReply),
      (err: unknown) => process.send!({ id, latenciesMs: [], wallMs: 0, workflowIds: started, error: String(err) } satisfies CallerReply),
    );
  });
  process.on('disconnect', () => {
    void connection.close().finally(() => process.exit(0));
  });
  process.send!('ready');
}

void main();
