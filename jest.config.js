/** Three tiers, each its own jest invocation (see scripts/test.sh): pure unit tests,
 * integration tests against a real stack (Temporal dev server, API, worker, Postgres
 * or PGlite), and tests that run workflow code in-process on Temporal's Core SDK. */
const tsJest = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] };
const common = { testEnvironment: 'node', transform: tsJest, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // A global option: per-project testTimeout is ignored by jest.
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    { ...common, displayName: 'temporal', testMatch: ['<rootDir>/test/temporal/**/*.test.ts'] },
    // Not in `make test`: writes test/histories (make record-histories).
    { ...common, displayName: 'record', testMatch: ['<rootDir>/test/record/**/*.test.ts'] },
  ],
};
