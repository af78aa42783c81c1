import { z } from 'zod';
import { proxyActivities } from '@temporalio/workflow';
import type { HookActivities } from '../../activities/hooks/activities';

/**
 * Short and bounded, so a hook.* layer of a Dag fails within seconds when its target is down:
 * 4 attempts, 0.5 s, 1 s, 2 s apart. What the activity marks non-retryable (a 4xx, a refused
 * target) fails at once. The HTTP calls heartbeat every second while they wait, so an attempt
 * lost with its worker is retried within 5 s.
 */
export const hooks = proxyActivities<HookActivities>({
  startToCloseTimeout: '30s',
  heartbeatTimeout: '5s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '4s', maximumAttempts: 4 },
});

export const eventUuid = () => z.uuid().describe('Id of a stored event (GET /api/hooks/events/{uuid})');
export const endpointUuid = () => z.uuid().describe('Id of a redirect endpoint of the organization');
