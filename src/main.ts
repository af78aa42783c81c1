import 'reflect-metadata';
import { Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { ConnectionStore } from '../activities/connections';
import { HookStore } from '../activities/hooks/store';
import { createDataConverter } from '../activities/payload-codec';
import { MasterPayloadKeys } from '../activities/payload-keys';
import { loadMasterKey, SecretBox } from '../activities/secret-box';
import { openDatabase } from '../db/client';
import { startAdminSocket } from './admin/admin-socket';
import { createApi } from './api';
import { adminSocketPath, loadConfig, pgliteDir } from './config';
import { loggableError } from './common/loggable-error';
import { keepDataDirPrivate } from './data-dir';
import { ensureDevToken } from './dev-bootstrap';
import { Identity } from './identity/identity';
import { createLoginHost } from './identity/login-host';
import { createLogger } from './logger';
import { shutdownBounds } from './shutdown';
import { TemporalClients } from './temporal-clients';
import { temporalTlsOptions } from './temporal-tls';
import { startTracing } from './telemetry/tracing';
import { lowerRunThreadPriority } from './worker/run-thread-priority';
import { createWorker } from './worker/worker';

type Mode = 'all' | 'api' | 'worker';

/**
 * `all` (what make up runs) serves the API and runs the worker in one process;
 * `api` and `worker` run them apart, as production does, to scale independently.
 */
async function main() {
  const mode = (process.argv[2] ?? 'all') as Mode;
  if (!['all', 'api', 'worker'].includes(mode)) throw new Error(`unknown mode ${mode}: use all, api or worker`);
  const config = loadConfig();
  keepDataDirPrivate(config.dataDir);
  // Before anything opens a connection or a server, so all of it runs under the tracer provider.
  const tracing = config.tracing && startTracing(config.tracing, mode);
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: pgliteDir(config),
    queryTimeoutMs: config.databaseQueryTimeoutMs,
  });
  await database.migrate();
  const masterKey = loadMasterKey(process.env, config.dataDir, config.devBootstrap);
  const connections = new ConnectionStore(database.db, SecretBox.derive(masterKey, 'connections'));
  const hooks = new HookStore(database.db, SecretBox.derive(masterKey, 'hook-secrets'));
  logger.info({ mode, node: process.version, database: database.description, temporal: config.temporalAddress }, 'starting');

  const stops: Array<() => Promise<unknown>> = [];
  let worker: Worker | undefined;
  let workerDone: Promise<void> | undefined;
  if (mode !== 'worker') {
    const connection = Connection.lazy({ address: config.temporalAddress, tls: temporalTlsOptions(config.temporalTls) });
    // Every payload this process hands to Temporal is encrypted: the API's under the organization of the request.
    const temporal = new TemporalClients(connection, config.temporalNamespace, new MasterPayloadKeys(masterKey), Boolean(tracing));
    const identity = new Identity(config.identity, database.db, masterKey);
    const deps = { config, logger, database, temporal, connections, hooks, identity, masterKey };
    const app = await createApi(deps);
    const loginHost = await createLoginHost(deps);
    await app.listen(config.port, config.host);
    await loginHost.listen(config.identity.loginPort, config.host);
    stops.push(() => app.close(), () => loginHost.close(), () => connection.close());
    if (database.kind === 'pglite') {
      stops.push(await startAdminSocket(adminSocketPath(config), database.db, logger, identity));
    }
    logger.info({ url: config.identity.loginUrl }, 'login host listening');
    logger.info({ url: `http://${config.host}:${config.port}/api` }, 'API listening');
  }
  if (mode !== 'api') {
    worker = await createWorker(config, database, connections, hooks, logger, createDataConverter(masterKey), tracing);
    workerDone = worker.run();
    const lowered = mode === 'all' ? lowerRunThreadPriority(config.runThreadsNice) : 0;
    logger.info(
      { task_queue: worker.options.taskQueue, pid: process.pid, run_threads_lowered: lowered, run_threads_nice: lowered ? config.runThreadsNice : 0 },
      'worker running',
    );
  }
  if (config.devBootstrap && mode !== 'worker') {
    const token = await ensureDevToken(config, database.db);
    process.stdout.write(
      [
        '',
        'Workflow Engine Service is up',
        `  API:         http://${config.host}:${config.port}/api   (docs: http://${config.host}:${config.port}/api/docs)`,
        `  Login host:  ${config.identity.loginUrl}   (end-user sign-in, OIDC issuer)`,
        `  Temporal UI: ${config.temporalUiUrl}`,
        `  Node.js:     ${process.version}`,
        `  Dev token:   ${token}   (also in .data/dev-token)`,
        '',
      ].join('\n') + '\n',
    );
  }

  // Last, so the spans of everything stopped before it are flushed.
  if (tracing) stops.push(() => tracing.shutdown());

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const { exitAfterMs } = shutdownBounds(config.shutdownGraceMs);
    logger.info({ signal, grace_ms: config.shutdownGraceMs, exit_after_ms: exitAfterMs }, 'shutting down');
    setTimeout(() => {
      logger.error({ exit_after_ms: exitAfterMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, exitAfterMs).unref();
    if (worker) {
      worker.shutdown();
      await workerDone?.catch((err) => logger.warn({ err: loggableError(err) }, 'worker abandoned its tasks at shutdown'));
    }
    for (const stop of stops) await stop().catch((err) => logger.warn({ err: loggableError(err) }, 'shutdown step failed'));
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  workerDone?.catch((err) => {
    if (stopping) return;
    logger.fatal({ err }, 'worker failed');
    process.exit(1);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
