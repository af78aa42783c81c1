import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createEsignActivities, type EsignRequest } from '../../activities/esign';
import { PROVIDER_FAILURE_BUDGET } from '../../activities/provider-attempts';
import type { EngineWorkflowInput, FailedRunDetails, TransitionEvent } from '../../workflows/runtime/contract';
import type { RunData } from '../../workflows/runtime/definition';
import { engineWorkflowCode } from '../../src/worker/worker';
import { dispatcherFor } from '../support/outbound';
import { testDataConverter, timeSkippingEnv } from '../support/temporal-test-env';

/**
 * The provider call budget on Temporal's time-skipping server, with the real workflow
 * definition and the real activity: an attempt "lost with its worker" is one that stops
 * heartbeating and never reports (what Temporal sees of a SIGKILLed worker), so the
 * server ends it by heartbeat time-out and schedules the next attempt.
 */
jest.setTimeout(120_000);

const DELETE = 'esign.authorizations.delete-user-authorization';
const QUEUE = 'provider-budget-test';
const ORG = 'org_budget_a';
const TOKEN = 'budget-test-token-7c1e';

describe('provider call budget on the time-skipping server', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let provider: http.Server;
  let base: string;
  /** Provider calls by authorization id, with the status answered. */
  const calls = new Map<string, number[]>();
  const deleted = new Set<string>();
  /** Per authorization id: which activity attempts are lost, before or after they call the provider. */
  const lost = new Map<string, { before?: number[]; after?: number[] }>();
  const attempts = new Map<string, number[]>();

  beforeAll(async () => {
    provider = http.createServer((req, res) => {
      const id = decodeURIComponent(req.url!.split('/').at(-1)!);
      const answer = (status: number, body?: unknown) => {
        calls.set(id, [...(calls.get(id) ?? []), status]);
        if (body === undefined) res.writeHead(status).end();
        else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (id.startsWith('busy-')) return answer(503, { errorCode: 'SERVICE_UNAVAILABLE', message: 'busy' });
      if (id.startsWith('ok-') && !deleted.has(id)) {
        deleted.add(id);
        return answer(204);
      }
      answer(404, { errorCode: 'RESOURCE_NOT_FOUND', message: 'no such authorization' });
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;

    env = await timeSkippingEnv();
    const real = createEsignActivities({ allowHttpHosts: ['127.0.0.1'], timeoutMs: 2_000, dispatcher: dispatcherFor([base]) });
    /** Never reports and never heartbeats again, until the worker shuts down. */
    const vanish = async () => {
      await Context.current().cancelled.catch(() => undefined);
      throw new Error('lost attempt released at shutdown');
    };
    worker = await Worker.create({
      connection: env.nativeConnection,
      dataConverter: testDataConverter,
      taskQueue: QUEUE,
      ...engineWorkflowCode,
      shutdownGraceTime: '1s',
      activities: {
        async projectRunStarted() {},
        async projectTransition(_e: TransitionEvent) {},
        async esignRequest(req: EsignRequest) {
          const id = req.path.split('/').at(-1)!;
          const { attempt } = Context.current().info;
          attempts.set(id, [...(attempts.get(id) ?? []), attempt]);
          const plan = lost.get(id) ?? {};
          if (plan.before?.includes(attempt)) return vanish();
          const result = await real.esignRequest(req);
          if (plan.after?.includes(attempt)) return vanish();
          return result;
        },
      },
    });
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
    await new Promise((r) => provider?.close(r));
  });

  interface Outcome {
    ok: boolean;
    output: RunData;
    failureType?: string;
  }

  async function deleteRun(authorizationid: string): Promise<Outcome> {
    const input: EngineWorkflowInput = {
      organization_uuid: ORG,
      initial_data: { base_url: `${base}/api`, api_token: TOKEN, accountid: '12345', userid: 'u-1', authorizationid },
    };
    const handle = await env.client.workflow.start(DELETE, { taskQueue: QUEUE, workflowId: `wf_budget_${randomBytes(6).toString('hex')}`, args: [input] });
    try {
      return { ok: true, output: (await handle.result()) as RunData };
    } catch (err) {
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
      return { ok: false, output: (cause.details?.[0] as FailedRunDetails).output, failureType: cause.type ?? undefined };
    }
  }

  const uid = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

  it(`completes after more lost attempts than the budget (${PROVIDER_FAILURE_BUDGET + 2} lost, then one call)`, async () => {
    const id = uid('ok');
    const lostAttempts = Array.from({ length: PROVIDER_FAILURE_BUDGET + 2 }, (_, i) => i + 1);
    lost.set(id, { before: lostAttempts });
    const o = await deleteRun(id);
    expect(o.ok).toBe(true);
    expect(o.output.status_code).toBe(204);
    expect(o.output.already_absent).toBeUndefined();
    expect(attempts.get(id)).toEqual([...lostAttempts, lostAttempts.length + 1]);
    expect(calls.get(id)).toEqual([204]);
  });

  it(`fails after exactly ${PROVIDER_FAILURE_BUDGET} provider failures, lost attempts in between not counted`, async () => {
    const id = uid('busy');
    lost.set(id, { before: [2, 4] });
    const o = await deleteRun(id);
    expect(o.ok).toBe(false);
    expect(o.failureType).toBe('server_error');
    expect(o.output.failure_reason).toBe('e-signature API answered HTTP 503: SERVICE_UNAVAILABLE: busy');
    expect(calls.get(id)).toEqual(Array(PROVIDER_FAILURE_BUDGET).fill(503));
    expect(attempts.get(id)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a DELETE done at the provider whose answer was lost, re-sent and answered 404, completes with already_absent', async () => {
    const id = uid('ok');
    lost.set(id, { after: [1] });
    const o = await deleteRun(id);
    expect(o.ok).toBe(true);
    expect(o.output).toMatchObject({ status_code: 404, already_absent: true, authorizationid: id, api_token: '[redacted]' });
    expect(calls.get(id)).toEqual([204, 404]);
  });

  it('a DELETE answered 404 on its first attempt still fails not_found', async () => {
    const id = uid('missing');
    const o = await deleteRun(id);
    expect(o.ok).toBe(false);
    expect(o.failureType).toBe('not_found');
    expect(o.output.already_absent).toBeUndefined();
    expect(calls.get(id)).toEqual([404]);
  });
});
