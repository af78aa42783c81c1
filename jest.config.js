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
    // Attacks on the running service, one test per attack (README, Security): the integration stack.
    {
      ...common,
      displayName: 'security',
      testMatch: ['<rootDir>/test/security/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    { ...common, displayName: 'temporal', testMatch: ['<rootDir>/test/temporal/**/*.test.ts'] },
    // Fault injection: each suite starts and abuses a stack of its own. CHAOS_MODE=full is
    // `make chaos`; the short form runs in `make test`. Postgres outage needs DATABASE_URL.
    {
      ...common,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.test.ts'],
      testPathIgnorePatterns: process.env.DATABASE_URL ? ['/node_modules/'] : ['/node_modules/', '/test/chaos/postgres-outage\\.test\\.ts$'],
      globalSetup: '<rootDir>/test/chaos/global-setup.ts',
    },
    // Schemathesis against the whole API on a stack of its own: bounded in `make test`, more in `make fuzz`.
    { ...common, displayName: 'fuzz', testMatch: ['<rootDir>/test/fuzz/**/*.test.ts'] },
    // Not in `make test`: writes test/histories (make record-histories).
    { ...common, displayName: 'record', testMatch: ['<rootDir>/test/record/**/*.test.ts'] },
  ],
};
