import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cpuSampleOf,
  errorOf,
  parseApps,
  parseCrashList,
  parseDeviceInfo,
  parseDeviceList,
  parseLanguage,
  parseLogLine,
  parseLogLines,
  syslogMessageOf,
  testRunFailureOf,
  testRunOf,
} from '../../src/agent/drivers/ios/go-ios-output.ts';

const RECORDINGS = path.join(import.meta.dirname, '..', 'support', 'fake-ios', 'recordings');
const recording = (name: string) =>
  fs.readFileSync(path.join(RECORDINGS, name), 'utf8').replaceAll('{TMPDIR}', '/tmp/run').replaceAll('{UDID}', 'u1');

describe('go-ios log lines', () => {
  it('reads slog JSON lines, keeps other lines as text, and skips blank ones', () => {
    expect(parseLogLine('{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"ok","pid":3}')).toEqual({
      level: 'INFO',
      msg: 'ok',
      attrs: { pid: 3 },
    });
    expect(parseLogLine('panic: runtime error')).toEqual({ level: 'TEXT', msg: 'panic: runtime error', attrs: {} });
    expect(parseLogLine('{"not":"a log line"}')).toMatchObject({ level: 'TEXT' });
    expect(parseLogLine('   ')).toBeNull();
  });

  it('reads what go-ios 1.2.0 says about a phone that is not paired (captured), reboot\'s "error" included', () => {
    const lines = parseLogLines(recording('unpaired.stderr.jsonl'));
    expect(lines.map((line) => errorOf([line]))).toEqual([
      "failed getting values: could not retrieve PairRecord with error: ReadPair failed with errorcode '1', is the device paired?",
      "failed getting info: could not retrieve PairRecord with error: ReadPair failed with errorcode '1', is the device paired?",
      "reboot failed: could not retrieve PairRecord with error: ReadPair failed with errorcode '1', is the device paired?",
      "failed getting language: could not retrieve PairRecord with error: ReadPair failed with errorcode '1', is the device paired?",
    ]);
    expect(parseDeviceList(recording('list.stdout.json'))).toEqual([
      { udid: '00008030-001A2D3E4F5A6B7C', productType: '', productVersion: '', connectionType: '' },
    ]);
    expect(errorOf(parseLogLines(recording('apps-unpaired.stderr.txt')))).toBeNull();
  });

  it('names the last error with its cause (captured from the real go-ios 1.2.0)', () => {
    const lines = parseLogLines(
      recording('agent-not-running.stderr.jsonl') + recording('list-no-usbmuxd.stderr.jsonl'),
    );
    expect(lines.map((line) => line.level)).toEqual(['WARN', 'ERROR']);
    expect(errorOf(lines)).toBe(
      'failed getting device list: dial unix /var/run/usbmuxd: connect: no such file or directory',
    );
    expect(errorOf(lines.slice(0, 1))).toBeNull();
  });
});

describe('go-ios command output', () => {
  it('reads the detailed device list, the bare one, and an empty one', () => {
    const detailed =
      '{"deviceList":[{"Udid":"00008030-001A2D3E4F5A6B7C","ProductName":"iPhone OS","ProductType":"iPhone15,4","ProductVersion":"17.4.1","ConnectionType":"USB"}]}';
    expect(parseDeviceList(detailed)).toEqual([
      { udid: '00008030-001A2D3E4F5A6B7C', productType: 'iPhone15,4', productVersion: '17.4.1', connectionType: 'USB' },
    ]);
    expect(parseDeviceList('{"deviceList":["abc"]}')).toEqual([
      { udid: 'abc', productType: '', productVersion: '', connectionType: '' },
    ]);
    expect(parseDeviceList('{"deviceList":null}')).toEqual([]);
    expect(() => parseDeviceList('no devices')).toThrow('ios list printed no JSON');
  });

  it("reads a device's model and iOS version from ios info", () => {
    expect(
      parseDeviceInfo(
        'u1',
        '{"DeviceName":"Lab iPhone 1","ProductType":"iPhone15,4","ProductVersion":"17.4.1","UniqueDeviceID":"u1"}',
      ),
    ).toEqual({ udid: 'u1', productType: 'iPhone15,4', productVersion: '17.4.1', connectionType: '' });
    expect(() => parseDeviceInfo('u1', '{"DeviceName":"x"}')).toThrow('no ProductVersion');
  });

  it('reads installed apps, the language, and crash reports', () => {
    const apps = JSON.stringify([
      {
        CFBundleIdentifier: 'com.a',
        CFBundleName: 'A',
        CFBundleDisplayName: 'App A',
        CFBundleShortVersionString: '2.1',
        CFBundleExecutable: 'A',
        ApplicationType: 'User',
      },
      { Path: '/x' },
    ]);
    expect(parseApps(apps)).toEqual([{ bundleId: 'com.a', name: 'App A', version: '2.1', executable: 'A' }]);
    expect(parseApps('null\n')).toEqual([]);
    expect(parseLanguage('{"Language":"fi","Locale":"fi_FI"}\n')).toEqual({ language: 'fi', locale: 'fi_FI' });
    expect(() => parseLanguage('{"Language":"fi"}')).toThrow('no Language and Locale');
    expect(parseCrashList('{"files":["Sample-2026-01-01-120002.ips"],"length":1}')).toEqual([
      'Sample-2026-01-01-120002.ips',
    ]);
  });

  it('turns sysmontap samples into the share of all cores, ignoring its other lines', () => {
    const samples = parseLogLines(recording('sysmontap.stderr.jsonl')).map(cpuSampleOf);
    expect(samples[0]).toBeNull();
    expect(samples.slice(1)).toEqual([62.5 / 600, 118 / 600, 87.25 / 600, 45 / 600]);
    expect(
      cpuSampleOf({ level: 'INFO', msg: 'received CPU usage data', attrs: { cpu_total_load: 900, enabled_cpus: 6 } }),
    ).toBe(1);
    expect(
      cpuSampleOf({ level: 'INFO', msg: 'received CPU usage data', attrs: { cpu_total_load: 'x', enabled_cpus: 6 } }),
    ).toBeNull();
  });

  it('unwraps syslog lines', () => {
    expect(syslogMessageOf('{"msg":"Jan  1 12:00:00 iPhone kernel[0] <Notice>: hi"}')).toBe(
      'Jan  1 12:00:00 iPhone kernel[0] <Notice>: hi',
    );
    expect(syslogMessageOf('plain text line\n')).toBe('plain text line');
  });
});

describe('XCTest results from go-ios', () => {
  it('reads passes, their duration and their screenshot attachments', () => {
    const run = testRunOf(parseLogLines(recording('runtest-passing.stderr.jsonl')))!;
    expect(run.testCases).toEqual([
      {
        suiteName: 'CheckoutUITests',
        className: 'CheckoutUITests',
        methodName: 'testBrowseCatalogue',
        duration: 412,
        result: 'PASSED',
        errorMessage: null,
        stacktrace: null,
      },
      {
        suiteName: 'CheckoutUITests',
        className: 'CheckoutUITests',
        methodName: 'testPayWithValidCard',
        duration: 598,
        result: 'PASSED',
        errorMessage: null,
        stacktrace: null,
      },
    ]);
    expect(run.attachments).toEqual([
      {
        path: '/tmp/run/4F1C2B3A-0D9E-4C8B-9A7F-6E5D4C3B2A10',
        name: 'Checkout screen',
        uniformTypeIdentifier: 'public.png',
      },
    ]);
  });

  it('reads a failure with its message and file:line', () => {
    const failed = testRunOf(parseLogLines(recording('runtest-failing.stderr.jsonl')))!.testCases.filter(
      (testCase) => testCase.result === 'FAILED',
    );
    expect(failed).toEqual([
      {
        suiteName: 'CheckoutUITests',
        className: 'CheckoutUITests',
        methodName: 'testPayWithExpiredCard',
        duration: 733,
        result: 'FAILED',
        errorMessage: 'XCTAssertEqual failed: ("Paid") is not equal to ("Card expired")',
        stacktrace: '/Users/ci/work/Sample/SampleUITests/CheckoutUITests.swift:42',
      },
    ]);
  });

  it('reads skips and expected failures, and a test that never finished', () => {
    const unit = testRunOf(parseLogLines(recording('runtest-unit.stderr.jsonl')))!.testCases;
    expect(unit.map((testCase) => [testCase.methodName, testCase.result, testCase.errorMessage])).toEqual([
      ['testPriceFormatting', 'PASSED', null],
      ['testNeedsNetwork', 'SKIPPED', 'Test skipped - no network in the lab'],
      ['testKnownRoundingBug', 'PASSED', null],
    ]);
    const crashed = testRunOf(parseLogLines(recording('runtest-crash.stderr.jsonl')))!.testCases[1]!;
    expect(crashed).toMatchObject({
      methodName: 'testOpenBrokenScreen',
      result: 'FAILED',
      errorMessage: expect.stringContaining('did not finish'),
      stacktrace: null,
    });
    const stalled = testRunOf([
      {
        level: 'INFO',
        msg: 'test results',
        attrs: {
          results: [
            {
              Name: 's',
              TestCases: [
                {
                  ClassName: 'c',
                  MethodName: 'm',
                  Status: 'stalled',
                  Err: { Message: 'Test case stalled', File: 'a.swift', Line: 3 },
                },
              ],
            },
          ],
        },
      },
    ])!;
    expect(stalled.testCases[0]).toMatchObject({
      result: 'FAILED',
      errorMessage: 'Test case stalled',
      stacktrace: 'a.swift:3',
    });
  });

  it('says why no tests ran when go-ios logged no results', () => {
    const endless = parseLogLines(recording('runtest-endless.stderr.jsonl'));
    expect(testRunOf(endless)).toBeNull();
    const noImage = parseLogLines(recording('runtest-no-developer-image.stderr.jsonl'));
    expect(testRunOf(noImage)).toBeNull();
    expect(testRunFailureOf(noImage)).toMatch(
      /^Failed running Xcuitest: failed connecting to com\.apple\.testmanagerd/,
    );
    expect(testRunFailureOf(endless)).toBeNull();
  });
});
