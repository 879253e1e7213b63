import { describe, expect, it } from 'vitest';
import { parseJUnit } from '../../src/results/junit.ts';

describe('JUnit parsing', () => {
  it('reads an Ant/Surefire style suite with failures, errors and skips', () => {
    const cases = parseJUnit(`<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.example.LoginTest" tests="4" failures="1" errors="1" skipped="1" time="1.5">
  <properties><property name="java.version" value="17"/></properties>
  <testcase classname="com.example.LoginTest" name="testOk" time="0.25"/>
  <testcase classname="com.example.LoginTest" name="testFails" time="0.5">
    <failure message="expected:&lt;1&gt; but was:&lt;2&gt;" type="java.lang.AssertionError">java.lang.AssertionError: expected:&lt;1&gt; but was:&lt;2&gt;
	at com.example.LoginTest.testFails(LoginTest.java:20)</failure>
  </testcase>
  <testcase classname="com.example.LoginTest" name="testErrors" time="0.1"><error message="boom" type="java.lang.NullPointerException"><![CDATA[java.lang.NullPointerException: boom]]></error></testcase>
  <testcase classname="com.example.LoginTest" name="testLater"><skipped/></testcase>
  <system-out>hello</system-out>
</testsuite>`);
    expect(cases.map((c) => [c.methodName, c.result, c.duration])).toEqual([
      ['testOk', 'PASSED', 250],
      ['testFails', 'FAILED', 500],
      ['testErrors', 'FAILED', 100],
      ['testLater', 'SKIPPED', 0],
    ]);
    expect(cases[1]).toMatchObject({
      className: 'com.example.LoginTest',
      suiteName: 'com.example.LoginTest',
      errorMessage: 'expected:<1> but was:<2>',
    });
    expect(cases[1]!.stacktrace).toContain('at com.example.LoginTest.testFails(LoginTest.java:20)');
    expect(cases[2]).toMatchObject({ errorMessage: 'boom', stacktrace: 'java.lang.NullPointerException: boom' });
  });

  it('reads <testsuites> with several and nested suites (pytest, jest-junit)', () => {
    const cases = parseJUnit(`<testsuites name="jest tests" tests="3">
  <testsuite name="cart" tests="2">
    <testcase classname="cart adds items" name="cart adds items" time="0.004"/>
    <testsuite name="nested"><testcase classname="tests.test_pay" name="test_declined" time="0.010"><failure message="AssertionError: declined">assert False</failure></testcase></testsuite>
  </testsuite>
  <testsuite name="pytest"><testcase classname="tests.test_login" name="test_login[admin]" time="1.2"/></testsuite>
</testsuites>`);
    expect(cases.map((c) => [c.suiteName, c.className, c.methodName, c.result])).toEqual([
      ['cart', 'cart adds items', 'cart adds items', 'PASSED'],
      ['nested', 'tests.test_pay', 'test_declined', 'FAILED'],
      ['pytest', 'tests.test_login', 'test_login[admin]', 'PASSED'],
    ]);
  });

  it('takes the first line of a failure without message as its message', () => {
    const [testCase] = parseJUnit(
      '<testsuite><testcase name="t"><failure>Boom happened\n  at x</failure></testcase></testsuite>',
    );
    expect(testCase).toMatchObject({ className: 'unknown', errorMessage: 'Boom happened', result: 'FAILED' });
  });

  it('refuses malformed XML and documents without suites, clearly', () => {
    expect(() => parseJUnit('<testsuite><testcase name="x"></testsuite>')).toThrow('not well-formed XML');
    expect(() => parseJUnit('<results/>')).toThrow('no <testsuite>');
  });
});
