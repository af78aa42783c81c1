import type { EngineWorkflowInput } from './contract';

/**
 * Metadata the worker's codec puts on every payload it decrypted: the
 * organization the payload's encryption proved, or PLATFORM_OWNER for a payload
 * sealed with the master key itself (only the service holds it). A payload that
 * reached the worker in clear has none.
 */
export const VERIFIED_ORGANIZATION_METADATA = 'engine-verified-organization';
export const PLATFORM_OWNER = 'platform';

/** Where the payload converter leaves that organization on the value it decoded (not enumerable: invisible to JSON and spreads). */
export const VERIFIED_ORGANIZATION = Symbol.for('workflow-engine.verified-organization');

export const ORGANIZATION_MISMATCH = 'organization_mismatch';

/**
 * Why a run may not act for the organization its input names, or undefined when
 * it may: its input must have been encrypted for that organization (or by the
 * platform). The reason names organization ids only, never input data.
 */
export function organizationRefusal(input: EngineWorkflowInput): string | undefined {
  const verified = (input as { [VERIFIED_ORGANIZATION]?: unknown } | undefined)?.[VERIFIED_ORGANIZATION];
  const claimed = typeof input?.organization_uuid === 'string' ? input.organization_uuid : '(none)';
  if (verified === PLATFORM_OWNER || (typeof verified === 'string' && verified === claimed)) return undefined;
  if (typeof verified !== 'string') {
    return `the workflow input names organization ${claimed} but was not encrypted for it: start runs with that organization's codec key`;
  }
  return `the workflow input names organization ${claimed} but was encrypted for organization ${verified}`;
}
