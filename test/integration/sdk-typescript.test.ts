import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  AuthenticationError,
  bindings,
  ConflictError,
  errorFromResponse,
  generateBindings,
  NotFoundError,
  PermissionError,
  RateLimitError,
  type RunEvent,
  ValidationError,
  WorkflowEngine,
  WorkflowEngineError,
  WorkflowFailedError,
} from '@workflow-engine/sdk';
import { Agent, fetch as undiciFetch } from 'undici';
import { ESIGN_RESOURCES } from '../doubles/esign-double';
import { freshOrgToken, stackEnv, uniqueId } from '../support/api';
import { ExtraApi } from '../support/extra-api';
import { outboundAllowFor } from '../support/outbound';
import { cuttingFetch, DELETE, deleteInput, engineFor, RESOURCES } from '../support/sdk';

jest.setTimeout(60_000);

const BINDINGS_FILE = path.join(__dirname, '..', '..', 'sdk', 'typescript', 'src', 'generated', 'index.ts');

async function collect<T>(events: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const e of events) all.push(e);
  return all;
}

describe('TypeScript SDK against the live service', () => {
  const engine = engineFor();

  it('lists types and reads a schema, a definition and prerequisites', async () => {
    const list = await engine.catalog.listTypes({ prefix: 'esign' });
    expect(list.types.map((t) => t.workflow_type).sort()).toEqual([DELETE, RESOURCES]);
    const schema = await engine.catalog.getSchema(RESOURCES);
    expect(schema.input_schema).toMatchObject({ type: 'object', properties: { base_url: expect.any(Object) } });
    expect(schema.output_schema).toMatchObject({ type: 'object' });
    expect((await engine.catalog.getDefinition(RESOURCES)).states.map((s) => s.name)).toEqual(
      expect.arrayContaining(['PENDING', 'COMPLETED', 'FAILED']),
    );
    expect(await engine.catalog.getPrerequisites(RESOURCES)).toMatchObject({ workflow_type: RESOURCES });
    expect((await engine.me()).organization_uuid).toBe(stackEnv.orgA);
  });

  it('starts an e-signature run through the generated bindings and streams it to completion with events()', async () => {
    const run = await bindings(engine).esign.resources.getResourceInformation({ base_url: stackEnv.esignUrl });
    expect(run.workflowId).toMatch(/^wf_/);
    const events = await collect(run.events());
    const transitions = events.filter((e): e is Extract<RunEvent, { type: 'transition' }> => e.type === 'transition');
    expect(transitions.map((t) => [t.seq, t.from, t.to, t.action])).toEqual([[1, 'PENDING', 'COMPLETED', 'execute']]);
    expect(events.at(-1)).toEqual({ type: 'completed', stateName: 'COMPLETED', stateData: expect.objectContaining({ status_code: 200 }) });
    const output = await run.wait({ timeoutMs: 10_000 });
    expect(output.response).toEqual(ESIGN_RESOURCES);
    expect(await run.get()).toMatchObject({ workflow_id: run.workflowId, status: 'COMPLETED', workflow_type: RESOURCES });
    const history = await engine.workflows.history(run.workflowId);
    expect(history.transitions.map((t) => t.seq)).toEqual(transitions.map((t) => t.seq));
  });

  it('wait() on a failing run throws WorkflowFailedError with the failure fields; retry() after the double is fixed completes it', async () => {
    const run = await engine.workflows.start(DELETE, deleteInput('once401'));
    const failure = await run.wait({ timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const failed = failure as WorkflowFailedError;
    expect(failed.workflowId).toBe(run.workflowId);
    expect(failed.failureType).toBe('unauthorized');
    expect(failed.message).toBeTruthy();
    expect(failed.fields).toMatchObject({ failed_step: 'execute', failure_reason: failed.message });
    expect(failed.stateData).toMatchObject({ status_code: 401, api_token: '[redacted]' });

    // once401 answers 204 from its second call on: the "fixed" double.
    expect(await run.retry()).toEqual({ workflow_id: run.workflowId, state_name: 'PENDING', is_terminal: false });
    expect(await run.wait({ timeoutMs: 30_000 })).toMatchObject({ status_code: 204, response: null });
    expect(await run.get()).toMatchObject({ status: 'COMPLETED', attempt: 2 });
  });

  it('events() resumes with Last-Event-ID after the stream is cut mid-run: no gap, no duplicate', async () => {
    const first = await engine.workflows.start(DELETE, deleteInput('once401'));
    await expect(first.wait({ timeoutMs: 30_000 })).rejects.toBeInstanceOf(WorkflowFailedError);
    await first.retry();

    const { fetchImpl, lastEventIds } = cuttingFetch();
    const cutting = engineFor(stackEnv.tokenA, { fetch: fetchImpl });
    const events = await collect(cutting.workflows.stream(first.workflowId, { signal: AbortSignal.timeout(20_000) }));

    expect(lastEventIds).toEqual([null, '1']);
    const seqs = events.flatMap((e) => (e.type === 'transition' ? [e.seq] : []));
    const history = await engine.workflows.history(first.workflowId);
    expect(seqs).toEqual(history.transitions.map((t) => t.seq));
    expect(seqs).toEqual([1, 2]);
    expect(events.at(-1)?.type).toBe('completed');
  });

  it('lists runs page by page with an async iterator over every page', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await engine.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl })).workflowId);
    const firstPage = await engine.workflows.list({ workflow_type: RESOURCES, limit: 2 });
    expect(firstPage.runs).toHaveLength(2);
    expect(firstPage.next_cursor).toEqual(expect.any(String));
    const seen: string[] = [];
    for await (const run of firstPage) seen.push(run.workflow_id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it('idempotency keys: the same key returns the same run, marked replayed', async () => {
    const key = uniqueId('sdk-key');
    const a = await engine.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl }, { idempotencyKey: key });
    const b = await engine.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl }, { idempotencyKey: key });
    expect(b.workflowId).toBe(a.workflowId);
    expect([a.replayed, b.replayed]).toEqual([false, true]);
  });

  it('takes the token from a function, called for each request', async () => {
    const getToken = jest.fn(async () => stackEnv.tokenA);
    const viaFunction = new WorkflowEngine({ baseUrl: `${stackEnv.apiUrl}/api`, token: getToken });
    expect((await viaFunction.me()).organization_uuid).toBe(stackEnv.orgA);
    await viaFunction.catalog.listTypes();
    expect(getToken).toHaveBeenCalledTimes(2);
  });

  it("runs on undici's fetch with an Agent of its own (the README's recipe against Node 24's fetch delay): start, stream, errors", async () => {
    const dispatcher = new Agent();
    const calls: string[] = [];
    const viaUndici = engineFor(stackEnv.tokenA, {
      fetch: ((url: string, init: object) => {
        calls.push(url);
        return undiciFetch(url, { ...init, dispatcher });
      }) as unknown as typeof fetch,
    });
    try {
      const run = await viaUndici.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl });
      const events = await collect(run.events());
      expect(events.at(-1)).toMatchObject({ type: 'completed', stateName: 'COMPLETED' });
      expect(await run.get()).toMatchObject({ workflow_id: run.workflowId, status: 'COMPLETED' });
      await expect(viaUndici.workflows.get('wf_missing_run')).rejects.toBeInstanceOf(NotFoundError);
      expect(calls.some((url) => url.endsWith(`/workflows/${run.workflowId}/stream`))).toBe(true);
    } finally {
      await dispatcher.close();
    }
  });

  describe('error mapping', () => {
    it('401: AuthenticationError', async () => {
      const err = await engineFor('wes_not-a-token')
        .me()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(err).toMatchObject({ status: 401, code: 'unauthorized' });
      expect((err as Error).message).not.toContain('wes_not-a-token');
    });

    it("403: PermissionError, from the API's 403 body (the codec's origin check is the only 403 a request can provoke)", async () => {
      const res = await fetch(`${stackEnv.apiUrl}/api/temporal-codec/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(403);
      const err = errorFromResponse(res.status, await res.text(), res.headers);
      expect(err).toBeInstanceOf(PermissionError);
      expect(err).toBeInstanceOf(WorkflowEngineError);
      expect(err).toMatchObject({ status: 403, code: 'origin_not_allowed' });
    });

    it('404: NotFoundError, also for another organization’s run', async () => {
      await expect(engine.workflows.get('wf_does_not_exist')).rejects.toMatchObject({
        constructor: NotFoundError,
        status: 404,
        code: 'not_found',
      });
      const run = await engine.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl });
      await expect(engineFor(stackEnv.tokenB).workflows.get(run.workflowId)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('409: ConflictError for a retry of a COMPLETED run', async () => {
      const run = await engine.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl });
      await run.wait({ timeoutMs: 30_000 });
      await expect(run.retry()).rejects.toMatchObject({ constructor: ConflictError, status: 409, code: 'not_failed' });
    });

    it('422: ValidationError naming each field and rule; nothing started', async () => {
      const before = (await engine.workflows.list({ workflow_type: DELETE, limit: 1 })).runs[0]?.workflow_id;
      const err = await engine.workflows.start(DELETE, { base_url: 'not a url', surprise: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      const fields = (err as ValidationError).fields;
      expect(fields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'initial_data.surprise', rule: 'unknown_field' }),
          expect.objectContaining({ field: 'initial_data.accountid', rule: 'required' }),
        ]),
      );
      expect((await engine.workflows.list({ workflow_type: DELETE, limit: 1 })).runs[0]?.workflow_id).toBe(before);
    });

    it('retries idempotent calls on 429 after Retry-After; a start only when it has an idempotency key', async () => {
      let calls = 0;
      const limitedOnce: typeof fetch = async (input, init) => {
        calls += 1;
        if (calls === 1) {
          const body = JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', details: null } });
          return new Response(body, { status: 429, headers: { 'retry-after': '1', 'content-type': 'application/json' } });
        }
        return fetch(input, init);
      };
      const retrying = engineFor(stackEnv.tokenA, { fetch: limitedOnce, maxRetries: 2 });
      const started = Date.now();
      expect((await retrying.me()).organization_uuid).toBe(stackEnv.orgA);
      expect(calls).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);

      calls = 0;
      await expect(retrying.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl })).rejects.toBeInstanceOf(RateLimitError);
      expect(calls).toBe(1);
      calls = 0;
      const run = await retrying.workflows.start(RESOURCES, { base_url: stackEnv.esignUrl }, { idempotencyKey: uniqueId('sdk-retry') });
      expect(run.workflowId).toMatch(/^wf_/);
      expect(calls).toBe(2);
    });

    describe('429 from the service', () => {
      const extra = new ExtraApi({
        TEMPORAL_ADDRESS: stackEnv.temporalAddress,
        ENGINE_SECRET_KEY: process.env.TEST_ENGINE_SECRET_KEY!,
        RATE_LIMIT_READS_PER_MINUTE_TOKEN: '2',
        ALLOW_HTTP_HOSTS: '127.0.0.1',
        OUTBOUND_ALLOW: outboundAllowFor(stackEnv.esignUrl),
      });
      let token: string;
      beforeAll(async () => {
        await extra.start();
        token = JSON.parse(extra.cli(['org', 'create', uniqueId('sdk-limits'), '--json'])).token;
      });
      afterAll(() => extra.stop());

      it('RateLimitError with retryAfter once the limit is spent (no retries asked for)', async () => {
        const limited = new WorkflowEngine({ baseUrl: extra.url, token, maxRetries: 0 });
        await limited.me();
        await limited.me();
        const err = await limited.me().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RateLimitError);
        expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
        expect((err as RateLimitError).retryAfter).toBeGreaterThan(0);
      });
    });
  });

  it('the committed bindings of the built-in types are what the generator writes against the current catalog', async () => {
    // A fresh organization's catalog is the built-in types alone: other suites compose types in the shared ones.
    const generated = await generateBindings(engineFor(freshOrgToken('sdk-bindings')), { sdkImport: '../index.js' });
    expect(generated).toMatch(/export (interface|type) EsignResourcesGetResourceInformationInput\b/);
    // WFE_UPDATE_BINDINGS=1 rewrites the committed file instead of comparing (after a type changed).
    if (process.env.WFE_UPDATE_BINDINGS === '1') writeFileSync(BINDINGS_FILE, generated);
    expect(readFileSync(BINDINGS_FILE, 'utf8')).toBe(generated);
  });
});
