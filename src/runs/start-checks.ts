import { connectionDestination, type ConnectionStore } from '../../activities/connections';
import { originOf, sameOrigin } from '../../activities/origin';
import { literalAddressProblem, outboundUrlProblem } from '../../activities/outbound';
import { findTooDeep } from '../../workflows/runtime/json-walk';
import type { RunData } from '../../workflows/runtime/definition';
import type { AppConfig } from '../config';

/**
 * The checks a start makes beyond a type's input schema, for the run API and for a composition's
 * constants, which are a step's input as much as a start's initial_data is.
 */
export class StartChecks {
  constructor(
    private readonly config: Pick<AppConfig, 'allowHttpHosts' | 'outboundAllow' | 'limits'>,
    private readonly connections: Pick<ConnectionStore, 'get'>,
  ) {}

  /** What the outbound policy says against a URL the worker would call: https unless ALLOW_HTTP_HOSTS, a public address unless OUTBOUND_ALLOW. */
  outboundProblem(url: string): string | undefined {
    return outboundUrlProblem(url, this.config.allowHttpHosts) ?? literalAddressProblem(url, this.config.outboundAllow);
  }

  /** Bounds what a run carries through Temporal and the projection: the problem and its rule, if any. */
  shapeProblem(data: RunData): { rule: 'max_size' | 'max_depth'; message: string } | undefined {
    const { initialDataMaxBytes, initialDataMaxDepth } = this.config.limits;
    const bytes = Buffer.byteLength(JSON.stringify(data));
    if (bytes > initialDataMaxBytes) return { rule: 'max_size', message: `is ${bytes} bytes of JSON; the limit is ${initialDataMaxBytes}` };
    if (findTooDeep(data, initialDataMaxDepth)) {
      return { rule: 'max_depth', message: `nests more than ${initialDataMaxDepth} levels deep; the limit is ${initialDataMaxDepth}` };
    }
    return undefined;
  }

  /**
   * A connection's secrets go only to the destination stored with it: why `url` is not it. An
   * unknown connection, or one of another plugin, is left to the activity, which fails the run
   * closed with its own failure_type.
   */
  async connectionDestinationProblem(organizationUuid: string, plugin: string, connectionUuid: string, url: string): Promise<string | undefined> {
    const row = await this.connections.get(organizationUuid, connectionUuid);
    if (!row || row.plugin !== plugin) return undefined;
    const destination = connectionDestination(row);
    if (sameOrigin(url, destination)) return undefined;
    return destination
      ? `must have the origin of connection ${connectionUuid} (${originOf(destination)}), the only place its secrets are sent; or leave it out to use the connection's`
      : `connection ${connectionUuid} has no destination yet: set it with its secrets (PATCH /api/connections/${connectionUuid})`;
  }
}
