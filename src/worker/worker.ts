import path from 'node:path';
import { DefaultLogger, type LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createEsignActivities } from '../../activities/esign';
import { createProjection } from '../../activities/projection';
import type { DatabaseHandle } from '../../db/client';
import { TASK_QUEUE } from '../../workflows/constants';
import type { AppConfig } from '../config';
import type { Logger } from '../logger';

let runtimeInstalled = false;

/** Temporal's own log lines (worker, workflow and activity loggers) go to the same JSON logger. */
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
      // pino serializes errors under `err`; under any other key an Error prints as {}.
      logger[levels[entry.level]]({ component: sdkComponent, ...meta, ...(error ? { err: error } : {}) }, entry.message);
    }),
    shutdownSignals: [],
  });
}

export function workerActivities(config: AppConfig, database: DatabaseHandle) {
  return {
    ...createProjection(database.db),
    ...createEsignActivities({
      allowHttpHosts: config.allowHttpHosts,
      timeoutMs: config.providerTimeoutMs,
      defaultApiToken: config.esignApiToken,
    }),
  };
}

/** The worker's workflow code: a bundle built ahead of time when there is one, else bundled now. */
function workflowSource(): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  const prebuilt = process.env.WORKFLOW_BUNDLE_PATH;
  if (prebuilt) return { workflowBundle: { codePath: path.resolve(prebuilt) } };
  return { workflowsPath: require.resolve('../../workflows') };
}

export async function createWorker(config: AppConfig, database: DatabaseHandle, logger: Logger): Promise<Worker> {
  installRuntime(logger);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  return Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: TASK_QUEUE,
    ...workflowSource(),
    activities: workerActivities(config, database),
  });
}
