import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // PostgreSQL tests use a schema each; a few files at a time keeps connection counts modest.
    maxWorkers: 4,
  },
});
