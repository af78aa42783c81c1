import { eq } from 'drizzle-orm';
import { createIdentityActivities } from '../../activities/identity';
import type { DatabaseHandle } from '../../db/client';
import { identityApps } from '../../db/schema';
import { openMigratedPglite } from '../support/pglite';

describe('identity.app.provision activity on PGlite', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openMigratedPglite();
  });
  afterAll(() => database.close());

  it('answers a retried attempt with the app the first attempt created, and keys apps by organization and run', async () => {
    const activities = createIdentityActivities(database.db, { loginUrl: 'http://127.0.0.1:4001', apiUrl: 'http://127.0.0.1:4000' });
    const req = { organization_uuid: 'org_a', provision_key: 'wf_provision_1', name: 'Shop', redirect_uris: ['https://shop.example.com/cb'] };
    const first = await activities.provisionApp(req);
    const retried = await activities.provisionApp({ ...req, name: 'Shop (sent again)' });
    expect(retried).toEqual(first);
    expect(first.client_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await database.db.select().from(identityApps).where(eq(identityApps.organizationUuid, 'org_a'))).toHaveLength(1);

    const otherRun = await activities.provisionApp({ ...req, provision_key: 'wf_provision_2' });
    const otherOrg = await activities.provisionApp({ ...req, organization_uuid: 'org_b' });
    const ids = new Set([first, otherRun, otherOrg].map((a) => a.client_uuid));
    const keys = new Set([first, otherRun, otherOrg].map((a) => a.client_key));
    expect([ids.size, keys.size]).toEqual([3, 3]);
  });

  it('gives an SDK snippet whose options send the browser to this login host and its token exchange to this API', async () => {
    const urls = { loginUrl: 'https://login.example.com', apiUrl: 'https://example.com/engine' };
    const app = await createIdentityActivities(database.db, urls).provisionApp({
      organization_uuid: 'org_snippet',
      provision_key: 'wf_provision_snippet',
      name: 'Shop',
      redirect_uris: ['https://shop.example.com/cb'],
    });
    const [importLine, ...rest] = app.integration.sdk.snippet.split('\n');
    expect(importLine).toBe("import { createAuthClient } from '@workflow-engine/browser-auth';");
    // The snippet run as written, against a stand-in for the SDK that records what it is given.
    let options: unknown;
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
    const createAuthClient = (given: unknown) => ((options = given), { signIn: async () => undefined });
    await new AsyncFunction('createAuthClient', rest.join('\n'))(createAuthClient);
    expect(options).toEqual({ clientKey: app.client_key, loginUrl: urls.loginUrl, identityApi: urls.apiUrl, redirectUri: 'https://shop.example.com/cb' });
  });
});
