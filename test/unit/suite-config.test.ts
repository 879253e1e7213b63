/**
 * Test files share their worker's modules (vitest.config.ts) but for those in
 * test/support/isolated-files.ts: a file that replaces a module, sets an environment variable,
 * patches a built-in or samples this process's memory must be listed there, and every listed file
 * must exist (a renamed file would silently share). A helper module is loaded once per worker, so
 * hooks it registered as it loaded would run for the first file only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KNOWN_SECONDS } from '../support/file-durations.ts';
import { ISOLATED } from '../support/isolated-files.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

const allFiles = fs
  .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .map((file) => `test/${file.split(path.sep).join('/')}`);
const testFiles = allFiles.filter((file) => file.endsWith('.test.ts'));
const helpers = allFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));

/** What makes a file unfit to share a process: each is a reason it must be isolated. */
const UNSHARABLE: ReadonlyArray<[string, RegExp]> = [
  ['replaces a module', /\bvi\.(mock|doMock|unmock|resetModules|stubGlobal|stubEnv)\(/],
  ['sets an environment variable', /process\.env\.\w+\s*=[^=]|delete process\.env/],
  ['patches a built-in', /^\s*(fs|http|https|net|dns|os|child_process|crypto)\.\w+\s*=[^=]/m],
  ['samples this process memory', /process\.memoryUsage\(|support\/memory\.ts/],
];

describe('the suite configuration', () => {
  it('isolates every file that replaces a module, sets the environment, patches a built-in or samples memory', () => {
    const found = testFiles.flatMap((file) => {
      const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
      return UNSHARABLE.filter(([, pattern]) => pattern.test(source)).map(([why]) => `${file}: ${why}`);
    });
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((line) => !ISOLATED.includes(line.slice(0, line.indexOf(':'))))).toEqual([]);
  });

  it('has no helper module register hooks when it loads (they would belong to the first file of a worker only)', () => {
    expect(helpers.length).toBeGreaterThan(0);
    const hooked = helpers.filter((file) =>
      /^(beforeAll|afterAll|beforeEach|afterEach)\(/m.test(fs.readFileSync(path.join(ROOT, file), 'utf8')),
    );
    expect(hooked).toEqual([]);
  });

  it('lists only files that exist', () => {
    expect(ISOLATED.filter((file) => !testFiles.includes(file))).toEqual([]);
    // The sequencer's durations (test/support/sequencer.ts): a renamed file would start late.
    expect(Object.keys(KNOWN_SECONDS).filter((file) => !testFiles.includes(file))).toEqual([]);
  });
});
