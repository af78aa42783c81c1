import { z } from 'zod';
import type { RetryPolicy } from '@temporalio/common';
import { proxyActivities } from '@temporalio/workflow';
import type { HookActivities } from '../../activities/hooks/activities';

/**
 * Short and bounded, so a hook.* layer of a Dag fails within seconds when its target is down:
 * 4 attempts, 1 s, 2 s, 2 s apart. Not shorter: the Temporal server waits about a second before
 * any activity retry (an initial interval of 0.5 s was measured 1.0 s, 1.0 s, 2.0 s apart), so a
 * policy below that would state a timing that never happens. What the activity marks
 * non-retryable (a 4xx, a refused target) fails at once. The HTTP calls heartbeat every second
 * while they wait, so an attempt lost with its worker is retried within 5 s.
 */
export const HOOK_RETRY: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '2s', maximumAttempts: 4 };

export const hooks = proxyActivities<HookActivities>({
  startToCloseTimeout: '30s',
  heartbeatTimeout: '5s',
  retry: HOOK_RETRY,
});

export const eventUuid = () => z.uuid().describe('Id of a stored event (GET /api/hooks/events/{uuid})');
export const endpointUuid = () => z.uuid().describe('Id of a redirect endpoint of the organization');
