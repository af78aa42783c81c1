import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import type { HookPlanCheckActivities } from '../activities/hooks/plan-check';
import { HOOK_RETRY } from './hook/activities';
import { SECRET_REF } from './hook/contract';
import { dagOutput, defineDag } from './runtime/dag';
import type { DagPlan } from './runtime/dag-plan';
import type { RunData } from './runtime/definition';

/**
 * webhook.endpoint.create-verify-and-replay: creates a redirect endpoint, posts a test event to its
 * own ingress, delivers that event (signed) to the target, acknowledges it and expires the
 * endpoint's stale pending events; each layer a hook.* child run. No layer declares a compensation.
 */

const plan: DagPlan = {
  layers: [
    {
      layer: '01_hook_create_redirect',
      step: 'hook_create_redirect',
      workflow_type: 'hook.create-redirect',
      inputs: {
        endpoint_name: { from: 'input', name: 'endpoint_name' },
        target_url: { from: 'input', name: 'target_url' },
        secret_ref: { from: 'input', name: 'secret_ref' },
      },
    },
    {
      layer: '02_hook_receive_webhook',
      step: 'hook_receive_webhook',
      workflow_type: 'hook.receive-webhook',
      inputs: {
        endpoint_uuid: { from: 'step', step: 'hook_create_redirect', field: 'endpoint_uuid' },
        test_event: { from: 'input', name: 'test_event' },
      },
    },
    {
      layer: '03_hook_replay_event',
      step: 'hook_replay_event',
      workflow_type: 'hook.replay-event',
      inputs: { event_uuid: { from: 'step', step: 'hook_receive_webhook', field: 'event_uuid' } },
    },
    {
      layer: '04_hook_acknowledge_event',
      step: 'hook_acknowledge_event',
      workflow_type: 'hook.acknowledge-event',
      inputs: { event_uuid: { from: 'step', step: 'hook_receive_webhook', field: 'event_uuid' } },
    },
    {
      layer: '05_hook_expire_pending_events',
      step: 'hook_expire_pending_events',
      workflow_type: 'hook.expire-pending-events',
      inputs: {
        endpoint_uuid: { from: 'step', step: 'hook_create_redirect', field: 'endpoint_uuid' },
        ttl_seconds: { from: 'input', name: 'ttl_seconds' },
      },
    },
  ],
};

const input = z.strictObject({
  organization_uuid: z.string().describe("Must be the token's organization (else 403 organization_mismatch, and nothing starts)"),
  target_url: z.string().describe('Where the endpoint forwards events, signed: https unless the host is in ALLOW_HTTP_HOSTS, never a non-public address'),
  endpoint_name: z.string().min(1).max(100).describe('Unique in the organization'),
  secret_ref: z
    .string()
    .regex(SECRET_REF, { error: 'must be <connection_uuid>/<secret_name>' })
    .optional()
    .describe(
      "<connection_uuid>/webhook_secret or <connection_uuid>/webhook_secrets.<key>: a payments connection's webhook signing secret used as the signing secret; without it one is generated (fetch it with rotate-secret)",
    ),
  test_event: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('The JSON object posted to the ingress; default {"type":"engine.test",...}, the only one allowed with secret_ref'),
  ttl_seconds: z.number().int().min(0).optional().describe('Layer 5 expires pending events older than this (default 86400)'),
  workflow_run_id: z.string().min(1).max(200).optional().describe("The caller's own reference for this run, echoed"),
  actor: z.string().min(1).max(200).optional().describe('Who asked for the run, echoed'),
  idempotency_key: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, { error: 'must be 1-255 printable ASCII characters' })
    .optional()
    .describe('Same key in the same organization: the first run is returned (as the Idempotency-Key header)'),
  dry_run: z.boolean().optional().describe('Check the inputs, the secret_ref and the target, return status planned, create nothing'),
});

/** The spec requires endpoint_name; runs started before it was required defaulted it in layer 1. */
const inputBefore = input.partial({ endpoint_name: true });

const output = dagOutput(plan, {
  organization_uuid: z.string(),
  target_url: z.string(),
  endpoint_name: z.string().optional(),
  secret_ref: z.string().optional(),
  test_event: z.record(z.string(), z.unknown()).optional(),
  ttl_seconds: z.number().int().optional(),
  workflow_run_id: z.string().optional(),
  actor: z.string().optional(),
  idempotency_key: z.string().optional(),
  dry_run: z.boolean().optional(),
  resource_refs: z
    .object({ endpoint_uuid: z.string().nullable(), ingress_url: z.string().nullable(), event_uuids: z.array(z.string()) })
    .optional()
    .describe('What the run made or touched'),
  warnings: z.array(z.string()).optional().describe('For example an http target allowed by ALLOW_HTTP_HOSTS'),
});

const { hookCheckPlan } = proxyActivities<HookPlanCheckActivities>({ startToCloseTimeout: '30s', retry: HOOK_RETRY });

const field = (data: RunData, step: string, name: string) => {
  const value = (data[step] as RunData | null | undefined)?.[name];
  return typeof value === 'string' ? value : null;
};

export const webhookEndpointCreateVerifyAndReplay = defineDag({
  workflow_type: 'webhook.endpoint.create-verify-and-replay',
  version: '1.0',
  description: 'Creates a webhook redirect endpoint, sends it a test event and delivers it, signed, to the target (five hook.* layers)',
  input,
  input_before: { patch: 'webhook-dag-endpoint-name-required', schema: inputBefore },
  output,
  plan,
  exposed_to_end_users: false,
  outbound_url_fields: ['target_url'],
  organization_field: 'organization_uuid',
  idempotency_key_field: 'idempotency_key',
  dry_run_field: 'dry_run',
  async preflight(data, ctx) {
    const d = data as z.output<typeof input>;
    const { warnings } = await hookCheckPlan({
      organization_uuid: ctx.organization_uuid,
      endpoint_name: d.endpoint_name,
      target_url: d.target_url,
      secret_ref: d.secret_ref,
      test_event: d.test_event,
    });
    return { patch: { warnings } };
  },
  outputs: (data) => {
    const event = field(data, 'hook_receive_webhook', 'event_uuid');
    return {
      resource_refs: {
        endpoint_uuid: field(data, 'hook_create_redirect', 'endpoint_uuid'),
        ingress_url: field(data, 'hook_create_redirect', 'ingress_url'),
        event_uuids: event ? [event] : [],
      },
    };
  },
});
