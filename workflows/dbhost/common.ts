import { z } from 'zod';
import type { Prerequisite } from '../runtime/definition';
import { providerActivityOptions } from '../runtime/provider-activities';

/** What both database-host types share: the connection, the project id, the prerequisite, the call policy. */

export const dbhostConnection = z
  .uuid({ error: 'must be a UUID (the connection_uuid of a dbhost connection)' })
  .describe('A dbhost connection of the organization: resolves the api_token (and api_url) inside the worker');

/** Provider ids go into a URL path: no '/', no leading '.', so '..' cannot climb out of the project. */
export const providerId = (description: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/, {
      error: "must be a provider id: 1-100 letters, digits, '-', '_' or '.', not starting with '.'",
    })
    .describe(description);

export const dbhostPrerequisites: Prerequisite[] = [
  { plugin: 'dbhost', description: 'A dbhost connection holding the API key of the database-host account' },
];

/**
 * 5xx, 429 and time-outs back off (0.5 s, 1 s, 2 s) until they have spent the call's budget,
 * then the run fails; 4xx and connection problems are not retried. 30 s per attempt
 * covers PROVIDER_TIMEOUT_MS (10 s by default) with room for resolving the connection.
 */
export const dbhostActivityOptions = providerActivityOptions('30s');

export const failedAction = { failed_action: z.string().optional().describe('The action during which the run failed') };
