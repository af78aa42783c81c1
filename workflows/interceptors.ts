import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { EngineWorkflowInput } from './runtime/contract';
import { writeAhead } from './runtime/write-ahead';

/** Activity header carrying the run's organization, so activity log lines name it too. */
export const ORGANIZATION_HEADER = 'engine-organization-uuid';

/**
 * Puts organization_uuid on every log line about a run: the workflow's own
 * lines, and (through a header) those of the activities it schedules. Hands
 * a run's transitions to the activity of the step after them, and writes them
 * before any other command (runtime/write-ahead.ts).
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  writeAhead.enable();
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
        scheduleActivity: (input, next) => writeAhead.scheduleActivity({ ...input, headers: withOrg(input.headers) }, next),
        scheduleLocalActivity: (input, next) => writeAhead.before(() => next({ ...input, headers: withOrg(input.headers) }), input.activityType),
        startTimer: (input, next) => writeAhead.before(() => next(input)),
        startChildWorkflowExecution: (input, next) => writeAhead.before(() => next(input)),
        signalWorkflow: (input, next) => writeAhead.before(() => next(input)),
        continueAsNew: (input, next) => writeAhead.before(() => next(input)),
      },
    ],
  };
};
