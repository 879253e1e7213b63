/** Test case results, as drivers report them and the API shows them (`/test-case-runs`). */
export const TEST_CASE_RESULTS = ['PASSED', 'FAILED', 'SKIPPED'] as const;
export type TestCaseResult = (typeof TEST_CASE_RESULTS)[number];

export interface TestCase {
  readonly suiteName: string | null;
  readonly className: string;
  readonly methodName: string;
  /** Milliseconds. */
  readonly duration: number;
  readonly result: TestCaseResult;
  readonly errorMessage: string | null;
  readonly stacktrace: string | null;
}

export interface TestCaseCounts {
  readonly all: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

export function countTestCases(testCases: readonly TestCase[]): TestCaseCounts {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const testCase of testCases) {
    if (testCase.result === 'PASSED') passed++;
    else if (testCase.result === 'FAILED') failed++;
    else skipped++;
  }
  return { all: testCases.length, passed, failed, skipped };
}
