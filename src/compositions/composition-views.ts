import { z } from 'zod';
import { compositionStepSchema } from './composition-body';

/** The answers of /compositions, for the OpenAPI document. */
export const compositionCreated = z.object({
  composition_uuid: z.string(),
  version: z.number().int(),
  workflow_type: z.string().describe('virtual.<composition_uuid>@<version>: start it with POST /api/workflows/start'),
  input_schema: z.record(z.string(), z.unknown()).describe('JSON Schema of the free inputs (those mapped {"from": "input"})'),
});

export const compositionView = compositionCreated.extend({
  name: z.string(),
  exposed_to_end_users: z.boolean(),
  steps: z.array(compositionStepSchema),
  created_at: z.string(),
  updated_at: z.string(),
});

export const compositionDetail = compositionView.extend({
  versions: z.array(z.object({ version: z.number().int(), workflow_type: z.string(), created_at: z.string() })).describe('newest first; every one startable'),
});
