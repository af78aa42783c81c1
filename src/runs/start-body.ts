import { z } from 'zod';

/** POST /workflows/start's body; the MCP start_workflow tool takes the same fields. */
export const startBodySchema = z.strictObject({
  workflow_type: z.string().min(1).max(200),
  initial_data: z.record(z.string(), z.unknown()),
});

export type StartBody = z.output<typeof startBodySchema>;

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
