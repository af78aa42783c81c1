import { trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ORGANIZATION_HEADER } from '../../workflows/interceptors';

/** The attributes that find a run's spans: on the API request that started it and on every activity. */
export interface RunAttributes {
  workflow_id: string;
  workflow_type: string;
  organization_uuid?: string;
}

function tagActiveSpan(attributes: RunAttributes): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttributes({ workflow_id: attributes.workflow_id, workflow_type: attributes.workflow_type });
  if (attributes.organization_uuid) span.setAttribute('organization_uuid', attributes.organization_uuid);
}

/** Outermost interceptor of an organization's client: tags the API's request span with the run it starts. */
export const runClientAttributes = (organization: string): WorkflowClientInterceptor => ({
  async start(input, next) {
    tagActiveSpan({ workflow_id: input.options.workflowId, workflow_type: input.workflowType, organization_uuid: organization });
    return next(input);
  },
});

/** Runs inside the OpenTelemetry activity interceptor, so the active span is the activity's. */
export const runActivityAttributes: ActivityInterceptorsFactory = () => ({
  inbound: {
    execute(input, next) {
      const { workflowExecution, workflowType } = Context.current().info;
      if (!workflowExecution || !workflowType) return next(input);
      const header = input.headers[ORGANIZATION_HEADER];
      tagActiveSpan({
        workflow_id: workflowExecution.workflowId,
        workflow_type: workflowType,
        organization_uuid: header ? defaultPayloadConverter.fromPayload<string>(header) : undefined,
      });
      return next(input);
    },
  },
});
