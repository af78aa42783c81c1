/** What a developer needs to wire an app to the login host (identity.app.provision's `integration`). */
export function integrationOf(loginUrl: string, clientKey: string, redirectUri: string) {
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
        `const auth = createAuthClient({ clientKey: '${clientKey}', loginUrl: '${loginUrl}', redirectUri: '${redirectUri}' });`,
        'await auth.signIn(); // on the redirect page: const session = await auth.handleCallback();',
      ].join('\n'),
    },
  };
}
