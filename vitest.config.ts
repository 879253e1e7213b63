import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Generous: end-to-end tests start real processes, and CI machines are shared.
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // PostgreSQL tests use a schema each; a few files at a time keeps connection counts modest.
    maxWorkers: 4,
  },
});
