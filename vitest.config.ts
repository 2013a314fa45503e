import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure logic, no PostgreSQL, Redis, Dovecot or network: it runs with them
// stopped) and `integration` (real services; its global setup checks them and prepares the
// migrated databases once). docs/testing.md describes both.
const UNIT_EXCLUDED = ['test/console/sessions.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Integration tests start real servers (Dovecot, SMTP, scripted LLM); two at a time suits 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['test/support/count-assertions.ts'],
    reporters: ['default', './test/support/durations-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts', 'test/console/**/*.test.ts'], exclude: UNIT_EXCLUDED },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', ...UNIT_EXCLUDED],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
