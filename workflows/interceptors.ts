import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { EngineWorkflowInput } from './runtime/contract';

/** Activity header carrying the run's organization, so activity log lines name it too. */
export const ORGANIZATION_HEADER = 'engine-organization-uuid';

/**
 * Puts organization_uuid on every log line about a run: the workflow's own
 * lines, and (through a header) those of the activities it schedules.
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  let organization: string | undefined;
  const withOrg = (headers: Headers): Headers =>
    organization ? { ...headers, [ORGANIZATION_HEADER]: defaultPayloadConverter.toPayload(organization) } : headers;
  return {
    inbound: [
      {
        execute(input, next) {
          const arg = input.args[0] as EngineWorkflowInput | undefined;
          if (typeof arg?.organization_uuid === 'string') organization = arg.organization_uuid;
          return next(input);
        },
      },
    ],
    outbound: [
      {
        getLogAttributes: (input, next) => next(organization ? { ...input, organization_uuid: organization } : input),
        scheduleActivity: (input, next) => next({ ...input, headers: withOrg(input.headers) }),
        scheduleLocalActivity: (input, next) => next({ ...input, headers: withOrg(input.headers) }),
      },
    ],
  };
};
