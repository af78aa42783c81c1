import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { and, eq, inArray, sql } from 'drizzle-orm';
import pino from 'pino';
import { ConnectionStore } from '../../activities/connections';
import { HookStore } from '../../activities/hooks/store';
import { organizationLogAttributes } from '../../activities/log-attributes';
import { transitionWriter } from '../../activities/write-ahead';
import { createDataConverter, PAYLOAD_CONVERTER_PATH } from '../../activities/payload-codec';
import { MasterPayloadKeys } from '../../activities/payload-keys';
import { TemporalClients } from '../../src/temporal-clients';
import { SecretBox } from '../../activities/secret-box';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { runs } from '../../db/schema';
import { createApi } from '../../src/api';
import { createOrganization } from '../../src/auth/org-tokens';
import { type AppConfig, loadConfig } from '../../src/config';
import type { Logger } from '../../src/logger';
import { lowerRunThreadPriority } from '../../src/worker/run-thread-priority';
import { workerActivities, workflowBundlerOptions, workflowInterceptorModules } from '../../src/worker/worker';
import { startEsignDouble } from '../../test/doubles/esign-double';
import { outboundAllowFor } from '../../test/support/outbound';
import { freePort, waitFor } from '../../test/support/ports';
import { startTemporalDevServer, type TemporalDevServer } from '../../test/support/temporal-server';
import { createTestDatabase } from '../../test/support/test-database';
import { clock } from './clock';
import { MEMO_WORKFLOW_TYPE, SA_ORGANIZATION, SA_STATE, SA_WORKFLOW_TYPE, TASK_QUEUE } from '../../workflows/constants';
import type { ProjectionActivities, TransitionEvent } from '../../workflows/runtime/contract';
import { initialState } from '../../workflows/runtime/definition';
import { findDefinition } from '../../workflows/registry';
import { type BenchActivities, linear40Definition, tickerDefinition } from '../workflows';
import { Identity } from '../../src/identity/identity';

/** The initial state the API would tag a run with (the benchmark's own types included). */
function initialStateOf(workflowType: string): string {
  const def = findDefinition(workflowType) ?? [linear40Definition, tickerDefinition].find((d) => d.workflow_type === workflowType);
  return def ? initialState(def) : 'pending';
}

/** A second task queue whose worker runs the same bundle with a projection that writes nothing. */
export const NO_PROJECTION_QUEUE = 'workflow-engine-bench-noprojection';

/** Where the benchmark's logs and scratch data go (removed at the end unless BENCH_KEEP=1). */
export const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-bench-'));

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** BENCH_SCALE multiplies every N (default 1: sized for ~10 minutes on 2 cores). */
export const SCALE = envNumber('BENCH_SCALE', 1);
export const scaled = (n: number, min = 1) => Math.max(min, Math.round(n * SCALE));

/** Time spent in the projection's activities, per kind, since the last reset. */
export class ProjectionTimer {
  runStarted: number[] = [];
  transition: number[] = [];
  reset() {
    this.runStarted = [];
    this.transition = [];
  }
}

/** Everything `node dist/src/main.js all` runs, in this process, plus what the benchmarks need around it. */
export interface BenchStack {
  config: AppConfig;
  logger: Logger;
  /** The API (Nest application), listening on apiUrl. */
  app: INestApplication;
  database: DatabaseHandle;
  /** The payload codec's master key (the start benchmark's callers encrypt as a service would). */
  masterKey: Buffer;
  /** What a service starting runs with the Temporal client directly uses (its own connection). */
  client: Client;
  apiUrl: string;
  token: string;
  org: string;
  esignUrl: string;
  workflowBundle: { code: string };
  logFile: string;
  temporalAddress: string;
  /** clock() at which each `workflow_id:seq` transition's projection committed. */
  commits: Map<string, number>;
  /** When set, only transitions of these runs are recorded in `commits`. */
  recordCommitsOf?: Set<string>;
  projectionTimes: ProjectionTimer;
  /** Queries issued outside transactions and not answered yet: how many, and the oldest one's age and text. */
  inflightQueries(): { count: number; oldestMs: number; oldest?: string };
  /** The options the API starts a run with (same input shape, search attributes and memo). */
  startOptions(workflowType: string, workflowId: string, initialData: Record<string, unknown>, taskQueue?: string): WorkflowStartOptions;
  /** Starts a run the way the API does, with the Temporal client. */
  startDirect(workflowType: string, workflowId: string, initialData: Record<string, unknown>, taskQueue?: string): Promise<void>;
  /** Resolves once every one of these runs is terminal in the projection. */
  waitTerminal(ids: string[], timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

let runtimeInstalled = false;

/** Temporal warnings seen during the run, by their first words (e.g. "[TMPRL1104] Workflow task duration exceeded"). */
export const temporalWarnings = new Map<string, number>();

/** Temporal's log lines, core's included (WARN and above), go to the benchmark's log file and are counted. */
export function installRuntime(logger: Logger) {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => {
      const key = entry.message.replace(/[0-9a-f-]{36}(:\d+)*/g, '…').split(/[.:]/)[0].slice(0, 80);
      temporalWarnings.set(key, (temporalWarnings.get(key) ?? 0) + 1);
      logger.warn({ component: entry.meta?.sdkComponent, ...entry.meta }, entry.message);
    }),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'WARN' }, forward: {} } },
    shutdownSignals: [],
  });
}

export function benchLogger(file: string): Logger {
  // The service's own logger writes JSON lines to stdout; here they go to a file, at the same
  // level as production (info: one line per request), so their cost stays in the figures.
  return pino(
    { level: process.env.BENCH_LOG_LEVEL || 'info', base: { service: 'workflow-engine' }, redact: ['req.headers.authorization'] },
    pino.destination({ dest: file, sync: false }),
  );
}

export async function bundleBenchWorkflows(): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    workflowInterceptorModules,
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    ...workflowBundlerOptions,
    logger: new DefaultLogger('WARN'),
  });
  return { code };
}

/**
 * Temporal dev server (fresh, in memory, free ports), the database (a fresh database next to
 * DATABASE_URL's, else a PGlite directory in scratch), the e-signature double, the API and the
 * worker in this process, as `main.ts all` wires them, with the bench bundle.
 */
export async function startStack(): Promise<BenchStack> {
  const logFile = path.join(scratchDir, 'bench.log');
  const logger = benchLogger(logFile);
  installRuntime(logger);
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch((err) => console.error('bench: close step failed:', err));
  };
  try {
    const temporal: TemporalDevServer = await startTemporalDevServer(path.join(scratchDir, 'temporal.log'));
    closers.push(() => temporal.stop());

    let databaseUrl: string | undefined;
    if (process.env.DATABASE_URL) {
      const created = await createTestDatabase(process.env.DATABASE_URL);
      databaseUrl = created.url;
      closers.push(() => created.drop());
    }
    const esign = await startEsignDouble();
    closers.push(() => esign.close());

    const port = await freePort();
    const config = loadConfig({
      PATH: process.env.PATH,
      PORT: String(port),
      DATA_DIR: scratchDir,
      TEMPORAL_ADDRESS: temporal.address,
      ALLOW_HTTP_HOSTS: '127.0.0.1',
      OUTBOUND_ALLOW: outboundAllowFor(esign.url),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      // Limits off or far above what the benchmarks send: they measure the engine, not the limiter.
      RATE_LIMIT_STARTS_PER_MINUTE_ORG: '0',
      RATE_LIMIT_STARTS_PER_MINUTE_TOKEN: '0',
      RATE_LIMIT_READS_PER_MINUTE_ORG: '0',
      RATE_LIMIT_READS_PER_MINUTE_TOKEN: '0',
      RATE_LIMIT_STARTS_PER_MINUTE_APP: '0',
      RATE_LIMIT_READS_PER_MINUTE_APP: '0',
      SSE_MAX_STREAMS_PER_TOKEN: '10000',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'info',
      // RUN_THREADS_NICE=10 make bench: the runs' threads below the API's priority, as `main.js all` can run them.
      ...(process.env.RUN_THREADS_NICE ? { RUN_THREADS_NICE: process.env.RUN_THREADS_NICE } : {}),
    });
    const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(scratchDir, 'pglite') });
    closers.push(() => database.close());
    await database.migrate();
    const inflight = traceQueries(database);
    const masterKey = randomBytes(32);
    const connections = new ConnectionStore(database.db, SecretBox.derive(masterKey, 'connections'));
    const hooks = new HookStore(database.db, SecretBox.derive(masterKey, 'hook-secrets'));
    const dataConverter = createDataConverter(masterKey);

    const apiConnection = Connection.lazy({ address: config.temporalAddress });
    const apiClients = new TemporalClients(apiConnection, config.temporalNamespace, new MasterPayloadKeys(masterKey));
    const identity = new Identity(config.identity, database.db, masterKey);
    const app: INestApplication = await createApi({ config, logger, database, temporal: apiClients, connections, hooks, identity, masterKey });
    await app.listen(config.port, config.host);
    closers.push(() => apiConnection.close());
    closers.push(() => app.close());

    const commits = new Map<string, number>();
    const projectionTimes = new ProjectionTimer();
    const stack: Partial<BenchStack> = {};
    const real = workerActivities(config, database, connections, hooks);
    const timed: ProjectionActivities = {
      async projectRunStarted(e) {
        const t0 = performance.now();
        await real.projectRunStarted(e);
        projectionTimes.runStarted.push(performance.now() - t0);
      },
      async projectTransition(e: TransitionEvent) {
        const t0 = performance.now();
        await real.projectTransition(e);
        const t1 = performance.now();
        const committedAt = clock();
        projectionTimes.transition.push(t1 - t0);
        const key = `${e.workflow_id}:${e.seq}`;
        if ((!stack.recordCommitsOf || stack.recordCommitsOf.has(e.workflow_id)) && !commits.has(key)) commits.set(key, committedAt);
      },
    };
    const benchActivities: BenchActivities = {
      async benchStep({ step }) {
        return step;
      },
    };

    const workflowBundle = await bundleBenchWorkflows();
    const nativeConnection = await NativeConnection.connect({ address: config.temporalAddress });
    closers.push(() => nativeConnection.close());
    const workerOptions = (projection: ProjectionActivities) => {
      const writer = transitionWriter(projection);
      return {
        connection: nativeConnection,
        namespace: config.temporalNamespace,
        workflowBundle,
        dataConverter,
        activities: { ...real, ...projection, ...benchActivities },
        interceptors: { activity: [organizationLogAttributes, writer.interceptor] },
        sinks: writer.sinks,
      };
    };
    const worker = await Worker.create({ ...workerOptions(timed), taskQueue: TASK_QUEUE });
    const noop: ProjectionActivities = { async projectRunStarted() {}, async projectTransition() {} };
    const noProjection = await Worker.create({ ...workerOptions(noop), taskQueue: NO_PROJECTION_QUEUE });
    const workersDone = Promise.all([worker.run(), noProjection.run()]);
    // As `main.js all` does: the API and the worker share this process.
    lowerRunThreadPriority(config.runThreadsNice);
    closers.push(async () => {
      worker.shutdown();
      noProjection.shutdown();
      await workersDone;
    });

    const clientConnection = await Connection.connect({ address: config.temporalAddress });
    closers.push(() => clientConnection.close());
    const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace, dataConverter });
    const org = await createOrganization(database.db, 'bench');
    const startOptions = (workflowType: string, workflowId: string, initialData: Record<string, unknown>, taskQueue = TASK_QUEUE) => ({
      taskQueue,
      workflowId,
      args: [{ organization_uuid: org.organization_uuid, initial_data: initialData }],
      memo: { [MEMO_WORKFLOW_TYPE]: workflowType },
      typedSearchAttributes: [
        { key: SA_ORGANIZATION, value: org.organization_uuid },
        { key: SA_WORKFLOW_TYPE, value: workflowType },
        { key: SA_STATE, value: initialStateOf(workflowType) },
      ],
    });

    Object.assign(stack, {
      config,
      logger,
      app,
      database,
      masterKey,
      client,
      apiUrl: `http://127.0.0.1:${port}`,
      token: org.token,
      org: org.organization_uuid,
      esignUrl: esign.url,
      workflowBundle,
      logFile,
      temporalAddress: config.temporalAddress,
      commits,
      projectionTimes,
      inflightQueries: inflight,
      startOptions,
      async startDirect(workflowType: string, workflowId: string, initialData: Record<string, unknown>, taskQueue = TASK_QUEUE) {
        await client.workflow.start(workflowType, startOptions(workflowType, workflowId, initialData, taskQueue));
      },
      async waitTerminal(ids: string[], timeoutMs = 600_000) {
        const chunks: string[][] = [];
        for (let i = 0; i < ids.length; i += 500) chunks.push(ids.slice(i, i + 500));
        await waitFor(
          `${ids.length} runs to end`,
          async () => {
            let done = 0;
            for (const chunk of chunks) {
              const [row] = await database.db
                .select({ n: sql<number>`count(*)::int` })
                .from(runs)
                .where(and(inArray(runs.workflowId, chunk), eq(runs.isTerminal, true)));
              done += row.n;
            }
            return done >= ids.length ? true : undefined;
          },
          timeoutMs,
          250,
        );
      },
      close,
    });
    return stack as BenchStack;
  } catch (err) {
    await close();
    throw err;
  }
}

/** Wraps the driver's query() (PGlite or pg.Pool) to see queries that never get an answer. */
function traceQueries(database: DatabaseHandle): BenchStack['inflightQueries'] {
  const pending = new Map<number, { at: number; text: string }>();
  let next = 0;
  const client = (database.db as unknown as { $client?: { query?: (...args: unknown[]) => Promise<unknown> } }).$client;
  const original = client?.query?.bind(client);
  if (client && original) {
    client.query = (...args: unknown[]) => {
      const id = next++;
      pending.set(id, { at: performance.now(), text: String(typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text).slice(0, 120) });
      const result = original(...args);
      void Promise.resolve(result).then(
        () => pending.delete(id),
        () => pending.delete(id),
      );
      return result;
    };
  }
  return () => {
    let oldest: { at: number; text: string } | undefined;
    for (const q of pending.values()) if (!oldest || q.at < oldest.at) oldest = q;
    return { count: pending.size, oldestMs: oldest ? performance.now() - oldest.at : 0, oldest: oldest?.text };
  };
}

export function removeScratch() {
  if (process.env.BENCH_KEEP === '1') {
    console.log(`bench: scratch kept in ${scratchDir}`);
    return;
  }
  fs.rmSync(scratchDir, { recursive: true, force: true });
}
