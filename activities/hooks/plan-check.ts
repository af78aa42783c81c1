import { ApplicationFailure } from '@temporalio/common';
import type { ConnectionStore } from '../connections';
import { checkedAddress, OutboundPolicyError, type Resolve, systemResolve } from '../outbound-dispatcher';
import { refuseCustomTestEvent } from './activities';
import { resolveSecretRef, secretRefRefusal } from './secret-ref';
import type { HookStore } from './store';
import { plainHttp, type TargetPolicy, targetUrlProblem } from './target';

export interface HookPlanCheckConfig extends TargetPolicy {
  store: HookStore;
  connections: ConnectionStore;
  /** DNS unless a test stubs it. */
  resolve?: Resolve;
}

const refused = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);

/**
 * What webhook.endpoint.create-verify-and-replay checks before its first layer (and all its dry run
 * does): the target as the delivery would find it (the outbound policy on what the host resolves to
 * now; the delivery checks again on the address it connects to), the secret_ref (and that a test_event
 * goes with it only as the default one), the endpoint name.
 * Creates nothing; names no secret.
 */
export function createHookPlanCheckActivities(config: HookPlanCheckConfig) {
  const resolve = config.resolve ?? systemResolve;
  return {
    async hookCheckPlan(req: { organization_uuid: string; endpoint_name?: string; target_url: string; secret_ref?: string; test_event?: unknown }) {
      const problem = targetUrlProblem(req.target_url, config);
      if (problem) throw refused(`target_url ${problem}`, 'target_url_refused');
      const url = new URL(req.target_url);
      try {
        await checkedAddress(config.outboundAllow, resolve, { hostname: url.hostname, protocol: url.protocol, port: url.port });
      } catch (err) {
        if (err instanceof OutboundPolicyError) throw refused(`target_url ${err.message}`, 'target_url_refused');
        throw refused(`target_url host cannot be resolved: ${(err as Error).message}`, 'target_url_unresolvable');
      }
      if (req.secret_ref !== undefined) {
        const referenced = await resolveSecretRef(config.connections, req.organization_uuid, req.secret_ref);
        if ('refused' in referenced) throw secretRefRefusal(referenced.refused, req.secret_ref);
        if (req.test_event !== undefined) refuseCustomTestEvent(req.test_event);
      }
      if (req.endpoint_name !== undefined) {
        const existing = await config.store.endpointByName(req.organization_uuid, req.endpoint_name);
        if (existing && existing.targetUrl !== req.target_url) {
          throw refused(`an endpoint named "${req.endpoint_name}" already exists with another target_url`, 'endpoint_name_taken');
        }
      }
      const warnings = plainHttp(req.target_url) ? [`target_url uses plain http, allowed for ${url.hostname} by ALLOW_HTTP_HOSTS`] : [];
      return { warnings };
    },
  };
}

export type HookPlanCheckActivities = ReturnType<typeof createHookPlanCheckActivities>;
