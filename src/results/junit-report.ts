/**
 * Test cases as JUnit XML, whatever produced them (JUnit files, instrumentation output, the
 * crawler): one device run's report (`.../junit.xml`), or several device runs merged into one
 * `<testsuites>` file for a CI's test report (`devicecloud run --junit`). CI systems read this dialect.
 * The builder escapes markup; the text (names, failure messages: test output, often with ANSI
 * colours) goes through xmlSafe first, as in the API's encoder, so that the file always parses.
 */
import { XMLBuilder } from 'fast-xml-parser';
import type { TestCase } from '../domain/test-cases.ts';
import { xmlSafe } from '../domain/xml-text.ts';

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  format: true,
  suppressEmptyNode: true,
});

export interface JUnitSuite {
  readonly name: string;
  readonly testCases: readonly TestCase[];
  /** Epoch milliseconds the suite started, when known. */
  readonly timestamp: number | null;
}

function suiteOf({ name: suiteName, testCases, timestamp }: JUnitSuite) {
  const failures = testCases.filter((testCase) => testCase.result === 'FAILED').length;
  const skipped = testCases.filter((testCase) => testCase.result === 'SKIPPED').length;
  const time = testCases.reduce((sum, testCase) => sum + testCase.duration, 0) / 1000;
  const suite = {
    '@name': xmlSafe(suiteName),
    '@tests': testCases.length,
    '@failures': failures,
    '@errors': 0,
    '@skipped': skipped,
    '@time': time.toFixed(3),
    ...(timestamp !== null && { '@timestamp': new Date(timestamp).toISOString().slice(0, 19) }),
    testcase: testCases.map((testCase) => ({
      '@classname': xmlSafe(testCase.className),
      '@name': xmlSafe(testCase.methodName),
      '@time': (testCase.duration / 1000).toFixed(3),
      ...(testCase.result === 'FAILED' && {
        failure: { '@message': xmlSafe(testCase.errorMessage ?? ''), '#text': xmlSafe(testCase.stacktrace ?? '') },
      }),
      ...(testCase.result === 'SKIPPED' && { skipped: '' }),
    })),
  };
  return suite;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

export function junitReport(suiteName: string, testCases: readonly TestCase[], timestamp: number | null): string {
  return XML_DECLARATION + builder.build({ testsuite: suiteOf({ name: suiteName, testCases, timestamp }) });
}

/** Several suites in one file, with the totals CI systems show. */
export function junitSuites(name: string, suites: readonly JUnitSuite[]): string {
  const built = suites.map(suiteOf);
  const total = (key: '@tests' | '@failures' | '@skipped') => built.reduce((sum, suite) => sum + suite[key], 0);
  const time = built.reduce((sum, suite) => sum + Number(suite['@time']), 0);
  return (
    XML_DECLARATION +
    builder.build({
      testsuites: {
        '@name': xmlSafe(name),
        '@tests': total('@tests'),
        '@failures': total('@failures'),
        '@errors': 0,
        '@skipped': total('@skipped'),
        '@time': time.toFixed(3),
        testsuite: built,
      },
    })
  );
}
