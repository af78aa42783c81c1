import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** The one task queue every engine workflow and activity runs on. */
export const TASK_QUEUE = 'workflow-engine';

/**
 * The one Temporal workflow type every composed run executes under (Temporal type names are
 * static); the engine's workflow_type (projection, search attributes, memo, API) is
 * virtual.<uuid>@N. Its input carries the version it runs, so a later PUT never reaches it.
 */
export const COMPOSED_WORKFLOW = 'virtual';

/** Registered on the Temporal namespace so platform engineers can filter runs in the UI. */
export const SA_ORGANIZATION = defineSearchAttributeKey('EngineOrganizationUuid', SearchAttributeType.KEYWORD);
export const SA_WORKFLOW_TYPE = defineSearchAttributeKey('EngineWorkflowType', SearchAttributeType.KEYWORD);
export const SA_STATE = defineSearchAttributeKey('EngineStateName', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [SA_ORGANIZATION, SA_WORKFLOW_TYPE, SA_STATE];

/** Memo key under which a run's workflow type is kept. */
export const MEMO_WORKFLOW_TYPE = 'workflow_type';

/** Memo key under which a run started by a schedule's action carries the schedule's id. */
export const MEMO_SCHEDULE_ID = 'schedule_id';
export const SCHEDULE_ID_PREFIX = 'sch_';

/**
 * Memo key under which an end user's run carries its owner ({ end_user_uuid, client_uuid }), so the
 * workflow's own projection of its start writes the owner even when the API's registration did not.
 */
export const MEMO_END_USER = 'end_user';

export const RUN_ID_PREFIX = 'wf_';
export const ORGANIZATION_PREFIX = 'org_';
