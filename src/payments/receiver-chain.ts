import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RUN_ID_PREFIX } from '../../workflows/constants';
import { RECEIVER_CHAIN } from '../../workflows/payments-webhooks-receiver-chain';
import type { WorkflowDefinition } from '../../workflows/runtime/definition';

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

/** Everything the ingress can give a receiver; webhook_secret_key only when a named secret verified the delivery. */
export const INGRESS_INPUTS: readonly string[] = ['cloud_connection_uuid', 'payload', 'signature', 'webhook_secret_key'];

/** A receiver's required inputs that the ingress never gives: a composition needing one could never start from a delivery. */
export function inputsNoDeliveryGives(def: WorkflowDefinition): string[] {
  if (!(def.input instanceof z.ZodObject)) return [];
  const shape = def.input.shape as Record<string, z.ZodType>;
  return Object.keys(shape).filter((field) => !INGRESS_INPUTS.includes(field) && !shape[field].safeParse(undefined).success);
}
