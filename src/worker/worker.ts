import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { type ActivityInterceptorsFactory, DefaultLogger, type LogLevel, makeTelemetryFilterString, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ConnectionStore } from '../../activities/connections';
import { createDbhostActivities } from '../../activities/dbhost';
import { createEsignActivities } from '../../activities/esign';
import { createHookActivities } from '../../activities/hooks/activities';
import { createHookPlanCheckActivities } from '../../activities/hooks/plan-check';
import type { HookStore } from '../../activities/hooks/store';
import { createIdentityActivities } from '../../activities/identity';
import { organizationLogAttributes } from '../../activities/log-attributes';
import { parseOutboundAllow } from '../../activities/outbound-allow';
import { createOutboundDispatcher } from '../../activities/outbound-dispatcher';
import { createPaymentsActivities } from '../../activities/payments';
import { createProjection, dagChildReads } from '../../activities/projection';
import { transitionWriter } from '../../activities/write-ahead';
import type { DatabaseHandle } from '../../db/client';
import { TASK_QUEUE } from '../../workflows/constants';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';
import { shutdownBounds } from '../shutdown';
import { runActivityAttributes } from '../telemetry/run-attributes';
import type { Tracing } from '../telemetry/tracing';
import { temporalTlsOptions } from '../temporal-tls';

let runtimeInstalled = false;

/**
 * Only what an engineer needs from an error: a failure's details carry run
 * data (a retry checkpoint holds the inputs, secrets included), so they are never logged.
 */
function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const failureType = (error as { type?: unknown }).type;
  const cause = error.cause instanceof Error ? { name: error.cause.name, message: error.cause.message } : undefined;
  return { name: error.name, message: error.message, type: failureType, cause, stack: error.stack };
}

/** Temporal's own log lines (Core, worker, workflow and activity loggers) go to the same JSON logger. */
function installRuntime(logger: Logger) {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const { sdkComponent, error, ...meta } = (entry.meta ?? {}) as Record<string, unknown>;
      logger[levels[entry.level]]({ component: sdkComponent, ...meta, ...(error ? { err: describeError(error) } : {}) }, entry.message);
    }),
    // Core's own warnings (poll failures, a lost server) would otherwise go to stderr as text.
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} } },
    shutdownSignals: [],
  });
}

/**
 * OUTBOUND_ALLOW plus exactly the host:port of PUBLIC_API_URL, which hook.receive-webhook posts to:
 * the API's own port on loopback is reachable, no other port of it. Only that activity's
 * dispatcher has the entry: on the shared one, any provider call or hook delivery to a name
 * resolving to the API's address would reach the API, past the target_url check on its origin.
 */
function outboundAllowWithApi(config: AppConfig) {
  const api = new URL(config.publicApiUrl);
  const port = api.port || (api.protocol === 'https:' ? '443' : '80');
  return [...config.outboundAllow, ...parseOutboundAllow(`${api.hostname}:${port}`)];
}

export function workerActivities(config: AppConfig, database: DatabaseHandle, connections: ConnectionStore, hooks: HookStore) {
  const http = {
    allowHttpHosts: config.allowHttpHosts,
    timeoutMs: config.providerTimeoutMs,
    dispatcher: createOutboundDispatcher({ allow: config.outboundAllow }),
  };
  return {
    ...createProjection(database.db),
    ...dagChildReads(database.db),
    ...createEsignActivities({ ...http, defaultApiToken: config.esignApiToken, defaultApiBaseUrl: config.esignApiBaseUrl, connections }),
    ...createDbhostActivities({ ...http, connections }),
    ...createPaymentsActivities({ db: database.db, connections, toleranceSeconds: config.paymentsWebhookToleranceSeconds }),
    ...createHookActivities({
      ...http,
      ingressDispatcher: createOutboundDispatcher({ allow: outboundAllowWithApi(config) }),
      outboundAllow: config.outboundAllow,
      publicApiUrl: config.publicApiUrl,
      store: hooks,
      connections,
    }),
    ...createHookPlanCheckActivities({ allowHttpHosts: config.allowHttpHosts, outboundAllow: config.outboundAllow, publicApiUrl: config.publicApiUrl, store: hooks, connections }),
    ...createIdentityActivities(database.db, { loginUrl: config.identity.loginUrl, apiUrl: config.publicApiUrl }),
  };
}

/** The engine's own workflow interceptors: what the prebuilt bundle holds. */
export const workflowInterceptorModules = [require.resolve('../../workflows/interceptors')];

/** Modules every run shares instead of loading its own (workflows/runtime/sandbox-preload.ts says which and why). */
export const workflowBundlerOptions = { preloadModules: [require.resolve('../../workflows/runtime/sandbox-preload')] };

/** The engine's workflows as a worker bundles them at start (and as tests and replays run them). */
export const engineWorkflowCode = { workflowsPath: require.resolve('../../workflows'), bundlerOptions: workflowBundlerOptions };

/** With traces on, OpenTelemetry's too: its spans leave the sandbox through the `exporter` sink. */
export const tracedWorkflowInterceptorModules = [
  ...workflowInterceptorModules,
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/**
 * The worker's workflow code: a bundle built ahead of time when there is one (it holds the
 * engine's workflow interceptors already), else the workflows and their interceptors, bundled
 * now. OpenTelemetry's workflow interceptors run on every activation, so the prebuilt bundle
 * leaves them out and a worker with traces on bundles them in at start (a few seconds, once).
 */
function workflowSource(traced: boolean): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> & { workflowModules?: string[] } {
  const prebuilt = process.env.WORKFLOW_BUNDLE_PATH;
  if (prebuilt && !traced) return { workflowBundle: { codePath: path.resolve(prebuilt) } };
  return { ...engineWorkflowCode, workflowModules: traced ? tracedWorkflowInterceptorModules : workflowInterceptorModules };
}

const otelActivityInterceptors: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
  outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
});

export async function createWorker(
  config: AppConfig,
  database: DatabaseHandle,
  connections: ConnectionStore,
  hooks: HookStore,
  logger: Logger,
  dataConverter: DataConverter,
  tracing?: Pick<Tracing, 'processor' | 'resource'>,
): Promise<Worker> {
  installRuntime(logger);
  const connection = await NativeConnection.connect({ address: config.temporalAddress, tls: temporalTlsOptions(config.temporalTls) });
  const { workflowModules, ...code } = workflowSource(tracing !== undefined);
  const activities = workerActivities(config, database, connections, hooks);
  const writer = transitionWriter(activities);
  return Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: TASK_QUEUE,
    ...code,
    // Payload codecs run outside the workflow sandbox: the (prebuilt) bundle is the same with or without them.
    dataConverter,
    activities,
    interceptors: {
      workflowModules,
      // runActivityAttributes after OpenTelemetry's, so it tags the activity's span; the write ahead
      // last, so it runs inside the span, with the log attributes.
      activity: [
        organizationLogAttributes,
        ...(tracing ? [otelActivityInterceptors, runActivityAttributes] : []),
        writer.interceptor,
      ],
    },
    sinks: { ...writer.sinks, ...(tracing ? { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) } : {}) },
    shutdownGraceTime: config.shutdownGraceMs,
    shutdownForceTime: shutdownBounds(config.shutdownGraceMs).workerForceMs,
  });
}
