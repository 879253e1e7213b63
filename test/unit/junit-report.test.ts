import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { junitReport, junitSuites } from '../../src/results/junit-report.ts';

describe('JUnit report', () => {
  it('writes the test cases in the dialect CI systems read', () => {
    const xml = junitReport(
      'Test Run 1 on Pixel 8',
      [
        {
          suiteName: null,
          className: 'a.B',
          methodName: 'ok',
          duration: 1500,
          result: 'PASSED',
          errorMessage: null,
          stacktrace: null,
        },
        {
          suiteName: null,
          className: 'a.B',
          methodName: 'bad',
          duration: 20,
          result: 'FAILED',
          errorMessage: 'expected <1> & "2"',
          stacktrace: 'AssertionError\n\tat a.B.bad',
        },
        {
          suiteName: null,
          className: 'a.B',
          methodName: 'later',
          duration: 0,
          result: 'SKIPPED',
          errorMessage: null,
          stacktrace: null,
        },
      ],
      Date.UTC(2026, 0, 1),
    );
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false }).parse(
      xml,
    ).testsuite;
    expect(suite).toMatchObject({
      name: 'Test Run 1 on Pixel 8',
      tests: '3',
      failures: '1',
      skipped: '1',
      time: '1.520',
      timestamp: '2026-01-01T00:00:00',
    });
    expect(suite.testcase[1].failure).toMatchObject({
      message: 'expected <1> & "2"',
      '#text': 'AssertionError\n\tat a.B.bad',
    });
    expect(suite.testcase[2]).toHaveProperty('skipped');
  });

  it('merges the suites of several devices into one file with the totals', () => {
    const passed = {
      suiteName: null,
      className: 'a.B',
      methodName: 'ok',
      duration: 1000,
      result: 'PASSED' as const,
      errorMessage: null,
      stacktrace: null,
    };
    const failed = { ...passed, methodName: 'bad', result: 'FAILED' as const, errorMessage: 'no' };
    const xml = junitSuites('Run 7', [
      { name: 'Pixel 8', testCases: [passed, failed], timestamp: null },
      { name: 'iPhone 15', testCases: [passed], timestamp: null },
    ]);
    const parsed = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '',
      isArray: (name) => name === 'testsuite' || name === 'testcase',
    }).parse(xml).testsuites;
    expect(parsed).toMatchObject({ name: 'Run 7', tests: '3', failures: '1', time: '3.000' });
    expect(parsed.testsuite.map((suite: { name: string; tests: string }) => [suite.name, suite.tests])).toEqual([
      ['Pixel 8', '2'],
      ['iPhone 15', '1'],
    ]);
  });
});

describe('JUnit report of text XML cannot carry', () => {
  it('replaces it as the API does, in attributes and text, so that the file parses', () => {
    const xml = junitReport(
      'Run \u0001',
      [
        {
          suiteName: null,
          className: 'a.B\uffff',
          methodName: 'bad\ud800',
          duration: 1,
          result: 'FAILED',
          errorMessage: '\u001b[31mexpected\u001b[0m',
          stacktrace: 'at\u000b a.B',
        },
      ],
      null,
    );
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml).testsuite;
    expect(suite.name).toBe('Run \\u0001');
    expect(suite.testcase).toMatchObject({
      classname: 'a.B\\uffff',
      name: 'bad\ufffd',
      failure: { message: '\\u001b[31mexpected\\u001b[0m', '#text': 'at\\u000b a.B' },
    });
  });
});
