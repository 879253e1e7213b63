import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Generous: end-to-end tests start real processes, and CI machines are shared.
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // expect.poll() waits for a page or a process to show something: 1 s (vitest's default) is a
    // guess a loaded machine misses; a deadline costs nothing when the condition holds sooner.
    expect: { poll: { timeout: 30_000 } },
    // PostgreSQL tests use a schema each; a few files at a time keeps connection counts modest.
    maxWorkers: 4,
  },
});
