import { createHash } from 'node:crypto';
import { RUN_ID_PREFIX } from '../../workflows/constants';
import { RECEIVER_CHAIN } from '../../workflows/payments-webhooks-receiver-chain';

/**
 * The chain started for an event on a connection always has this id, so a delivery repeated
 * while the first is still being started cannot start a second one.
 */
export function chainWorkflowId(connectionUuid: string, eventId: string): string {
  return `${RUN_ID_PREFIX}pay_${createHash('sha256').update(`${connectionUuid}\n${eventId}`).digest('hex').slice(0, 40)}`;
}

/** The connection's own receiver (a composition, `virtual.<uuid>@N`), else the default chain. */
export function receiverWorkflowType(config: Record<string, unknown>): string {
  return typeof config.receiver_workflow_type === 'string' ? config.receiver_workflow_type : RECEIVER_CHAIN;
}
