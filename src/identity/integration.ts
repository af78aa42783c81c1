/** Where the login host and the API are reached from an app's pages. */
export interface IntegrationUrls {
  /** LOGIN_URL: the issuer and its endpoints. */
  loginUrl: string;
  /** PUBLIC_API_URL: the SDK exchanges codes and calls runs there, so its snippet must name it unless it is the SDK's default. */
  apiUrl: string;
}

/** What a developer needs to wire an app to the login host (identity.app.provision's `integration`). */
export function integrationOf({ loginUrl, apiUrl }: IntegrationUrls, clientKey: string, redirectUri: string) {
  return {
    issuer: loginUrl,
    discovery_url: `${loginUrl}/.well-known/openid-configuration`,
    authorize_url: `${loginUrl}/authorize`,
    token_url: `${loginUrl}/token`,
    jwks_url: `${loginUrl}/jwks`,
    flow: 'authorization_code_pkce' as const,
    sdk: {
      package: '@workflow-engine/browser-auth',
      install: 'npm install @workflow-engine/browser-auth',
      snippet: [
        "import { createAuthClient } from '@workflow-engine/browser-auth';",
        `const auth = createAuthClient({ clientKey: '${clientKey}', loginUrl: '${loginUrl}', identityApi: '${apiUrl}', redirectUri: '${redirectUri}' });`,
        'await auth.signIn(); // on the redirect page: const session = await auth.handleCallback();',
      ].join('\n'),
    },
  };
}
