import { proxyActivities } from '@temporalio/workflow';
import type { PaymentsActivities } from '../../activities/payments';

/**
 * The payments activities call no provider: they read a connection and write a row. A database
 * that is briefly down is waited out inside the attempt (heartbeating), then retried a few times.
 */
export const payments = proxyActivities<PaymentsActivities>({
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
});
