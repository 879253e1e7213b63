import { describe, expect, it } from 'vitest';
import { InstrumentationParser, parseInstrumentation } from '../../src/agent/drivers/adb/instrumentation.ts';
import { recording } from '../support/fake-adb/device.ts';

describe('am instrument -r status stream', () => {
  it('reads a passing run into passed test cases', () => {
    const report = parseInstrumentation(recording('instrument-passing.txt'));
    expect(report.testCases.map((testCase) => [testCase.className, testCase.methodName, testCase.result])).toEqual([
      ['com.devicecloud.sample.LoginTest', 'testValidLogin', 'PASSED'],
      ['com.devicecloud.sample.LoginTest', 'testLogout', 'PASSED'],
      ['com.devicecloud.sample.CheckoutTest', 'testAddToCart', 'PASSED'],
      ['com.devicecloud.sample.CheckoutTest', 'testPayWithCard', 'PASSED'],
    ]);
    expect(report.testCases[0]!.suiteName).toBe('LoginTest');
    expect(report).toMatchObject({ runFailure: null, crashed: false, interrupted: null, announced: 4 });
  });

  it("keeps a failure's message and whole stack trace, and tells ignored tests from failed assumptions", () => {
    const report = parseInstrumentation(recording('instrument-failing.txt'));
    const byName = Object.fromEntries(report.testCases.map((testCase) => [testCase.methodName, testCase]));
    expect(report.testCases.map((testCase) => testCase.result)).toEqual([
      'PASSED',
      'PASSED',
      'FAILED',
      'SKIPPED',
      'SKIPPED',
    ]);
    expect(byName.testPayWithExpiredCard).toMatchObject({
      errorMessage: 'java.lang.AssertionError: expected:<PAID> but was:<DECLINED>',
    });
    expect(byName.testPayWithExpiredCard!.stacktrace).toContain(
      'at com.devicecloud.sample.CheckoutTest.testPayWithExpiredCard(CheckoutTest.java:58)',
    );
    expect(byName.testPayWithExpiredCard!.stacktrace!.split('\n')).toHaveLength(10);
    // The stream text after the stack is not part of it.
    expect(byName.testPayWithExpiredCard!.stacktrace).not.toContain('Error in');
    expect(byName.testPayWithNfc).toMatchObject({
      result: 'SKIPPED',
      errorMessage: 'assumption failed: org.junit.AssumptionViolatedException: got: <false>, expected: is <true>',
    });
    expect(byName.testPayLater).toMatchObject({ result: 'SKIPPED', errorMessage: null });
    expect(report.runFailure).toBeNull();
  });

  it('fails the test a crash took down and says the app crashed', () => {
    const report = parseInstrumentation(recording('instrument-crash.txt'));
    expect(report.testCases.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['testValidLogin', 'PASSED'],
      ['testOpenReceipt', 'FAILED'],
    ]);
    expect(report).toMatchObject({
      crashed: true,
      runFailure: 'the app crashed: Process crashed.',
      interrupted: { className: 'com.devicecloud.sample.CheckoutTest', methodName: 'testOpenReceipt' },
    });
    expect(report.testCases[1]!.errorMessage).toBe('the test did not finish: the app crashed: Process crashed.');
  });

  it('reports a run that could not start, and output that was cut off', () => {
    const missing = parseInstrumentation(
      'INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{com.x.test/androidx.test.runner.AndroidJUnitRunner}\nINSTRUMENTATION_STATUS_CODE: -1\nandroid.util.AndroidException: INSTRUMENTATION_FAILED: com.x.test/androidx.test.runner.AndroidJUnitRunner\n',
    );
    expect(missing.testCases).toEqual([]);
    expect(missing.runFailure).toContain('Unable to find instrumentation info for: ComponentInfo{com.x.test/');
    const onError = parseInstrumentation(
      'onError: commandError=true message=INSTRUMENTATION_FAILED: com.x.test/androidx.test.runner.AndroidJUnitRunner\n',
    );
    expect(onError.runFailure).toBe(
      'the instrumentation could not start: INSTRUMENTATION_FAILED: com.x.test/androidx.test.runner.AndroidJUnitRunner',
    );
    const cut = parseInstrumentation(recording('instrument-passing.txt').split('INSTRUMENTATION_RESULT')[0]!);
    expect(cut.testCases).toHaveLength(4);
    expect(cut.runFailure).toMatch(/^the instrumentation output ended before the run did/);
    const aborted = parseInstrumentation('INSTRUMENTATION_ABORTED: System has crashed.\n');
    expect(aborted).toMatchObject({ crashed: true, runFailure: 'the app crashed: System has crashed.' });
  });

  it('streams: test cases come out as their status arrives, split anywhere, with durations from the clock', () => {
    let now = 1000;
    const parser = new InstrumentationParser(() => now);
    const text = recording('instrument-failing.txt').replaceAll('\n', '\r\n');
    const finished: string[] = [];
    for (let at = 0; at < text.length; at += 37) {
      now += 10;
      finished.push(
        ...parser.push(text.slice(at, at + 37)).map((testCase) => `${testCase.methodName}:${testCase.result}`),
      );
    }
    expect(finished).toEqual([
      'testValidLogin:PASSED',
      'testAddToCart:PASSED',
      'testPayWithExpiredCard:FAILED',
      'testPayWithNfc:SKIPPED',
      'testPayLater:SKIPPED',
    ]);
    const report = parser.end();
    expect(report.testCases.every((testCase) => testCase.duration >= 0)).toBe(true);
    expect(report.testCases[0]!.duration).toBeGreaterThan(0);
    expect(report.testCases[2]!.stacktrace).not.toContain('\r');
  });
});
