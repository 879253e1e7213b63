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

/** A test case result as kept: with its id and its device run's. */
export interface StoredTestCase extends TestCase {
  readonly id: number;
  readonly deviceRunId: number;
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

/**
 * How much of one device run's test results is kept: longer names, messages and stack traces are
 * cut with a visible marker, and cases beyond the count dropped with a note, never the whole
 * result refused (the output of a test is the customer's; a device is never blamed for it). The
 * agent cuts before sending (to fit the protocol's message size too) and the server cuts what it
 * receives, with this one rule.
 */
export const TEST_CASE_LIMITS = {
  /** Characters of a suite, class or method name. */
  nameChars: 1000,
  errorMessageChars: 100_000,
  stacktraceChars: 1_000_000,
  cases: 100_000,
} as const;

export type TestCaseLimits = { readonly [K in keyof typeof TEST_CASE_LIMITS]: number };

/** `text` at most `max` characters long, its end replaced by a marker saying how much was cut. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `… [cut: ${cut} more characters]`;
  let keep = Math.max(0, max - marker(text.length).length);
  // Never half a surrogate pair: a lone one is not valid UTF-8, which PostgreSQL refuses.
  if (keep > 0 && /[\uD800-\uDBFF]/.test(text[keep - 1]!)) keep -= 1;
  return (text.slice(0, keep) + marker(text.length - keep)).slice(0, max);
}

/** Text a database column takes whatever a test wrote: no NUL, no lone surrogate. */
function storable(text: string): string {
  return text.replace(/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

export interface FittedTestCases {
  readonly cases: TestCase[];
  /** What was cut or dropped, for the device run's fail reason; null when nothing was. */
  readonly note: string | null;
}

/** The test cases within `limits` (TEST_CASE_LIMITS, or lower ones to fit a message size). */
export function fitTestCases(cases: readonly TestCase[], limits: TestCaseLimits = TEST_CASE_LIMITS): FittedTestCases {
  let cut = 0;
  const fit = (text: string, max: number) => {
    const clean = storable(text);
    if (clean.length <= max) return clean;
    cut += 1;
    return cutText(clean, max);
  };
  const fitNullable = (text: string | null, max: number) => (text === null ? null : fit(text, max));
  const count = Math.min(limits.cases, TEST_CASE_LIMITS.cases);
  const kept = cases.slice(0, count).map((testCase) => ({
    ...testCase,
    suiteName: fitNullable(testCase.suiteName, Math.min(limits.nameChars, TEST_CASE_LIMITS.nameChars)),
    className: fit(testCase.className, Math.min(limits.nameChars, TEST_CASE_LIMITS.nameChars)),
    methodName: fit(testCase.methodName, Math.min(limits.nameChars, TEST_CASE_LIMITS.nameChars)),
    errorMessage: fitNullable(
      testCase.errorMessage,
      Math.min(limits.errorMessageChars, TEST_CASE_LIMITS.errorMessageChars),
    ),
    stacktrace: fitNullable(testCase.stacktrace, Math.min(limits.stacktraceChars, TEST_CASE_LIMITS.stacktraceChars)),
  }));
  const dropped = cases.length - kept.length;
  const notes = [
    ...(cut > 0 ? [`${cut} over-long test names, messages or stack traces were cut`] : []),
    ...(dropped > 0 ? [`${dropped} test cases beyond the first ${kept.length} were dropped`] : []),
  ];
  return { cases: kept, note: notes.length === 0 ? null : `results shortened: ${notes.join('; ')}` };
}

/**
 * The test cases within TEST_CASE_LIMITS and, as JSON, within `maxBytes`: stack traces, then
 * messages, then names are shortened, and as a last resort cases dropped, until they fit.
 */
export function fitTestCasesInto(cases: readonly TestCase[], maxBytes: number): FittedTestCases {
  const size = (fitted: FittedTestCases) => Buffer.byteLength(JSON.stringify(fitted.cases));
  let limits: TestCaseLimits = TEST_CASE_LIMITS;
  let fitted = fitTestCases(cases, limits);
  const steps: Array<(current: TestCaseLimits) => TestCaseLimits | null> = [
    (l) => (l.stacktraceChars > 2000 ? { ...l, stacktraceChars: Math.floor(l.stacktraceChars / 4) } : null),
    (l) => (l.errorMessageChars > 1000 ? { ...l, errorMessageChars: Math.floor(l.errorMessageChars / 4) } : null),
    (l) => (l.nameChars > 200 ? { ...l, nameChars: 200 } : null),
    (l) => (l.cases > 1 ? { ...l, cases: Math.floor(Math.min(l.cases, cases.length) / 2) } : null),
  ];
  for (const step of steps) {
    for (let next = step(limits); size(fitted) > maxBytes && next !== null; next = step(limits)) {
      limits = next;
      fitted = fitTestCases(cases, limits);
    }
  }
  return fitted;
}
