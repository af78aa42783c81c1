import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ORGANIZATION_HEADER } from '../workflows/interceptors';

/** Reads the organization the workflow put in the activity's headers into its log attributes. */
export const organizationLogAttributes: ActivityInterceptorsFactory = () => {
  let organization: string | undefined;
  return {
    inbound: {
      execute(input, next) {
        const header = input.headers[ORGANIZATION_HEADER];
        if (header) organization = defaultPayloadConverter.fromPayload<string>(header);
        return next(input);
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next(organization ? { ...input, organization_uuid: organization } : input),
    },
  };
};
