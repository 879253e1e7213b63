/**
 * Test files that must have a process of their own (vitest.config.ts): they replace a module
 * (`vi.mock`), change state of the whole process while they run (environment variables a child
 * process inherits, a patched built-in), or measure this process's memory. Every other file shares
 * its worker's modules with the files that ran before it. `test/unit/suite-config.test.ts` finds the
 * files that do these things and checks that they are listed here.
 */
export const ISOLATED: readonly string[] = [
  'test/integration/openapi-answers.test.ts', // vi.mock of the JSON encoder
  'test/integration/result-zips-memory.test.ts', // process.memoryUsage()
  'test/integration/blob-s3-memory.test.ts', // process.memoryUsage()
  'test/integration/hostile-input.test.ts', // replaces fs.open for one case
  'test/e2e/object-storage.test.ts', // AWS_* environment variables
  'test/drivers/adb-scripts.test.ts', // DEVICECLOUD_AGENT_TOKEN in the environment
  'test/drivers/virtual.test.ts', // DEVICECLOUD_AGENT_TOKEN in the environment
];
