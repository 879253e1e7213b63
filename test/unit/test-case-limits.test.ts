/**
 * Oversized results are cut with a visible marker, never refused (issue 15): the one rule the
 * agent applies before sending and the server to what it receives (domain/test-cases.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  type TestCase,
  TEST_CASE_LIMITS,
  cutText,
  fitTestCases,
  fitTestCasesInto,
} from '../../src/domain/test-cases.ts';
import { parseJUnit } from '../../src/results/junit.ts';

const base: TestCase = {
  suiteName: 's',
  className: 'C',
  methodName: 'm',
  duration: 1,
  result: 'PASSED',
  errorMessage: null,
  stacktrace: null,
};

/** The JUnit of issue 15: a 5,000-character test name, a 200 KB message, a 2 MB stack trace, and an honest case beside them. */
function oversizedJUnit(): string {
  return `<testsuite name="s">
<testcase classname="com.example.Big" name="${'n'.repeat(5000)}"><failure message="${'m'.repeat(200_000)}">${'at x\n'.repeat(400_000)}</failure></testcase>
<testcase classname="com.example.Small" name="ok"/>
</testsuite>`;
}

describe('test results beyond the limits', () => {
  it('keeps every case of an oversized JUnit, cutting the long fields with a marker', () => {
    const { cases, note } = fitTestCases(parseJUnit(oversizedJUnit()));
    expect(cases.map((testCase) => [testCase.className, testCase.result])).toEqual([
      ['com.example.Big', 'FAILED'],
      ['com.example.Small', 'PASSED'],
    ]);
    const [big] = cases;
    expect(big!.methodName).toHaveLength(TEST_CASE_LIMITS.nameChars);
    expect(big!.methodName).toMatch(/^n+… \[cut: \d+ more characters\]$/);
    expect(big!.errorMessage!.length).toBe(TEST_CASE_LIMITS.errorMessageChars);
    expect(big!.errorMessage).toMatch(/… \[cut: \d+ more characters\]$/);
    expect(big!.stacktrace!.length).toBe(TEST_CASE_LIMITS.stacktraceChars);
    expect(big!.stacktrace!.startsWith('at x\nat x\n')).toBe(true);
    expect(note).toBe('results shortened: 3 over-long test names, messages or stack traces were cut');
    // The marker says how much went: what was kept and what was cut add up to the original.
    const cut = Number(/cut: (\d+)/.exec(big!.methodName)![1]);
    expect(big!.methodName.indexOf('…') + cut).toBe(5000);
  });

  it('keeps the first 100,000 cases and says how many more there were', () => {
    const many = Array.from({ length: TEST_CASE_LIMITS.cases + 5 }, (_, index) => ({
      ...base,
      methodName: `t${index}`,
    }));
    const { cases, note } = fitTestCases(many);
    expect(cases).toHaveLength(TEST_CASE_LIMITS.cases);
    expect(note).toContain('5 test cases beyond the first 100000 were dropped');
  });

  it('fits a result into the message size by shortening stack traces first, keeping every case', () => {
    const heavy = Array.from({ length: 100 }, (_, index) => ({
      ...base,
      methodName: `t${index}`,
      result: 'FAILED' as const,
      errorMessage: 'boom',
      stacktrace: 'x'.repeat(1_000_000),
    }));
    const limit = 30 * 1024 * 1024;
    const { cases, note } = fitTestCasesInto(heavy, limit);
    expect(Buffer.byteLength(JSON.stringify(cases))).toBeLessThanOrEqual(limit);
    expect(cases).toHaveLength(100);
    expect(
      cases.every((testCase) => testCase.errorMessage === 'boom' && testCase.stacktrace!.endsWith('more characters]')),
    ).toBe(true);
    expect(note).toContain('100 over-long');
  });

  it('leaves text a database can store: no NUL, never half a surrogate pair', () => {
    expect(fitTestCases([{ ...base, methodName: 'a\0b' }]).cases[0]!.methodName).toBe('a\uFFFDb');
    const emoji = '😀'.repeat(600); // 1,200 UTF-16 units
    const cut = cutText(emoji, 1000);
    expect(cut.length).toBeLessThanOrEqual(1000);
    expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
    expect(fitTestCases([base]).note).toBeNull();
  });
});
