import { transitionWriter } from '../../activities/write-ahead';
import { workflowInterceptorModules } from '../../src/worker/worker';
import type { ProjectionActivities } from '../../workflows/runtime/contract';

/**
 * For a test worker or replay wired as src/worker/worker.ts wires the service's: the engine's
 * workflow interceptors, and the worker's half of writing transitions ahead through `projection`.
 */
export function engineWiring(projectTransition: ProjectionActivities['projectTransition'] = async () => undefined) {
  const writer = transitionWriter(projectTransition);
  return { interceptors: { workflowModules: workflowInterceptorModules, activity: [writer.interceptor] }, sinks: writer.sinks };
}
