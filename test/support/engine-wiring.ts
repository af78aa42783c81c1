import { transitionWriter } from '../../activities/write-ahead';
import { workflowInterceptorModules } from '../../src/worker/worker';
import type { ProjectionActivities } from '../../workflows/runtime/contract';

/**
 * For a test worker or replay wired as src/worker/worker.ts wires the service's: the engine's
 * workflow interceptors, and the worker's half of writing ahead through `projection` (by default, writing nothing: for replays).
 */
export function engineWiring(projection: ProjectionActivities = { projectRunStarted: async () => undefined, projectTransition: async () => undefined }) {
  const writer = transitionWriter(projection);
  return { interceptors: { workflowModules: workflowInterceptorModules, activity: [writer.interceptor] }, sinks: writer.sinks };
}
