import { defineConfig } from 'vitest/config';
import { ISOLATED } from './test/support/isolated-files.ts';
import { LongestFirst } from './test/support/sequencer.ts';

/** What every file gets, shared or isolated. */
const common = {
  // Generous: end-to-end tests start real processes, and CI machines are shared.
  testTimeout: 90_000,
  hookTimeout: 90_000,
  // expect.poll() waits for a page or a process to show something: 1 s (vitest's default) is a
  // guess a loaded machine misses; a deadline costs nothing when the condition holds sooner.
  expect: { poll: { timeout: 30_000 } },
  // adbkit before anything else of a worker (load-first.ts says why).
  setupFiles: ['test/support/load-first.ts'],
};

export default defineConfig({
  test: {
    // Here only, not in the projects: vitest runs the root's global setup and each project's again.
    globalSetup: ['test/support/global-setup.ts'],
    // PostgreSQL tests use a schema each; a few files at a time keeps connection counts modest.
    // Three workers took 11% less CPU idle (docs/benchmarks.md, "Workers"), but a fresh-clone CI
    // run with three failed 19 files at once, unexplained: four until that is understood.
    maxWorkers: 4,
    // The longest files start first, so that the run does not end on one of them (sequencer.ts).
    sequence: { sequencer: LongestFirst },
    // Files share their worker's modules (isolate: false): importing the server's modules anew for
    // each file cost more CPU than many files' tests (docs/benchmarks.md, "The suite: shared
    // workers"). A module's state therefore outlives a file: a support module registers no hooks of
    // its own (test/drivers/adb-world.ts). The files that cannot share are listed in isolated-files.ts.
    projects: [
      { test: { ...common, name: 'shared', include: ['test/**/*.test.ts'], exclude: [...ISOLATED], isolate: false } },
      { test: { ...common, name: 'isolated', include: [...ISOLATED], isolate: true } },
    ],
  },
});
