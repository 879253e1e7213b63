import { describe, expect, it } from 'vitest';
import { differences, newEntries } from '../../src/agent/drivers/adb/cleaning.ts';
import {
  amStartError,
  parseBattery,
  parseInstrumentationList,
  parseMeminfo,
  parseMonkey,
  parsePackageList,
  parseTopCpu,
} from '../../src/agent/drivers/adb/device-output.ts';
import { describeDevice } from '../../src/agent/drivers/adb/devices.ts';
import { adbServerFromEnv } from '../../src/agent/drivers/adb/index.ts';
import { CrashDetector } from '../../src/agent/drivers/adb/logcat.ts';
import { SettingsRefused, languageTag } from '../../src/agent/drivers/adb/settings.ts';
import { recording } from '../support/fake-adb/device.ts';

const properties = (name: string) =>
  Object.fromEntries([...recording(name).matchAll(/^\[(.*?)\]: \[(.*?)\]$/gm)].map((match) => [match[1]!, match[2]!]));

describe('what Android tools print', () => {
  it('describes a phone from getprop', () => {
    expect(describeDevice('28141FDH2000JY', properties('getprop-pixel7.txt'))).toMatchObject({
      displayName: 'Google Pixel 7',
      manufacturer: 'Google',
      osType: 'ANDROID',
      releaseVersion: '14',
      apiLevel: 34,
      formFactor: 'PHONE',
    });
    expect(describeDevice('ZY2242CQ7N', properties('getprop-moto-g5.txt'))).toMatchObject({
      displayName: 'Motorola Moto G (5)',
      manufacturer: 'Motorola',
      releaseVersion: '7.0',
      apiLevel: 24,
    });
    expect(
      describeDevice('x', { 'ro.product.manufacturer': 'samsung', 'ro.product.model': 'Samsung Galaxy Tab' })
        .displayName,
    ).toBe('Samsung Galaxy Tab');
    expect(
      describeDevice('x', { 'ro.product.model': 'SM-X710', 'ro.build.characteristics': 'tablet,nosdcard' }).formFactor,
    ).toBe('TABLET');
    expect(describeDevice('x', {})).toMatchObject({
      displayName: 'Unknown x',
      apiLevel: null,
      releaseVersion: 'unknown',
    });
  });

  it('reads total PSS and the pid from dumpsys meminfo, old and new layouts', () => {
    expect(parseMeminfo(recording('dumpsys-meminfo-api34.txt', { pid: 4321, package: 'com.x', pss: 45678 }))).toEqual({
      pid: 4321,
      pssKb: 45678,
    });
    expect(parseMeminfo(recording('dumpsys-meminfo-api24.txt', { pid: 99, package: 'com.x', pss: 23456 }))).toEqual({
      pid: 99,
      pssKb: 23456,
    });
    expect(parseMeminfo('No process found for: com.x\n')).toBeNull();
  });

  it("reads CPU from toybox top against the device's capacity, and from toolbox top as it is", () => {
    expect(parseTopCpu(recording('top-toybox.txt', { pid: 4321, package: 'com.x', cpu: '200.0' }), 4321)).toBe(0.25);
    expect(parseTopCpu(recording('top-toybox.txt', { pid: 4321, package: 'com.x', cpu: '12.5' }), 4321)).toBe(0.016);
    expect(parseTopCpu(recording('top-toolbox.txt', { pid: 77, package: 'com.x', cpu: '6' }), 77)).toBe(0.06);
    expect(parseTopCpu(recording('top-toolbox.txt', { pid: 77, package: 'com.x', cpu: '6' }), 78)).toBeNull();
    expect(parseTopCpu('nothing useful', 1)).toBeNull();
  });

  it('reads battery, package and instrumentation lists, monkey and am start output', () => {
    expect(parseBattery(recording('dumpsys-battery.txt', { level: 9, temperature: 463 }))).toEqual({
      level: 9,
      temperatureC: 46.3,
    });
    expect(parsePackageList(recording('pm-list-packages-moto-g5.txt'))).toContain('com.motorola.launcher3');
    expect(parsePackageList('package:b\r\npackage:a\n')).toEqual(['a', 'b']);
    expect(
      parseInstrumentationList(
        'instrumentation:com.x.test/androidx.test.runner.AndroidJUnitRunner (target=com.x)\ninstrumentation:com.y/.Runner (target=com.y)\n',
      ),
    ).toEqual([
      { testPackage: 'com.x.test', runner: 'androidx.test.runner.AndroidJUnitRunner', target: 'com.x' },
      { testPackage: 'com.y', runner: 'com.y.Runner', target: 'com.y' },
    ]);
    expect(parseMonkey(recording('monkey-ok.txt', { package: 'com.x', seed: 1, count: 50 }))).toEqual({
      injected: 50,
      finished: true,
      problem: null,
    });
    const crashed = parseMonkey(recording('monkey-crash.txt', { package: 'com.x', seed: 1, count: 50, pid: 4 }));
    expect(crashed).toMatchObject({
      injected: 137,
      finished: false,
      problem: { kind: 'crash', message: 'java.lang.IllegalStateException: receipt must not be null' },
    });
    expect(crashed.problem!.stacktrace).toContain('at com.devicecloud.sample.ReceiptActivity.onCreate');
    expect(amStartError('Starting: Intent { cmp=a/.B }\nStatus: ok\nComplete\n')).toBeNull();
    expect(
      amStartError('Starting: Intent { cmp=a/.B }\nError type 3\nError: Activity class {a/a.B} does not exist.\n'),
    ).toBe('Error type 3');
  });

  it("finds crashes and ANRs in logcat, with the stack on the crashing pid's lines", () => {
    const detector = new CrashDetector();
    for (const line of recording('logcat-boot.txt', { date: '02-06', time: '10:00:00.000' }).split('\n'))
      detector.push(line);
    const mark = detector.mark;
    for (const line of recording('logcat-crash.txt', {
      date: '02-06',
      time: '10:00:01.000',
      pid: 4242,
      package: 'com.devicecloud.sample',
    }).split('\n'))
      detector.push(line);
    for (const line of recording('logcat-anr.txt', {
      date: '02-06',
      time: '10:00:02.000',
      pid: 4343,
      package: 'com.other',
    }).split('\n'))
      detector.push(line);
    detector.end();
    expect(detector.problems.map((problem) => [problem.kind, problem.packageName, problem.message])).toEqual([
      ['crash', 'com.devicecloud.sample', 'java.lang.IllegalStateException: receipt must not be null'],
      [
        'anr',
        'com.other',
        'the app is not responding: Input dispatching timed out (Waiting to send non-key event because the touched window has not finished processing certain input events that were delivered to it over 500.0ms ago.)',
      ],
    ]);
    expect(detector.problems[0]!.stacktrace!.split('\n')).toHaveLength(6);
    expect(detector.since(mark, 'com.devicecloud.sample')).toHaveLength(1);
    expect(detector.since(detector.mark, 'com.devicecloud.sample')).toHaveLength(0);
  });
});

describe('adb driver rules', () => {
  it('deletes only the top of what is new in storage, and names every difference from the baseline', () => {
    expect(
      newEntries(
        ['/sdcard/DCIM', '/sdcard/new', '/sdcard/new/a', '/sdcard/new/b/c', '/sdcard/Download/x'],
        ['/sdcard/DCIM', '/sdcard/Download'],
      ),
    ).toEqual(['/sdcard/Download/x', '/sdcard/new']);
    const baseline = { packages: ['a', 'b'], files: ['/sdcard/DCIM'], wifiOn: true, locale: 'en-US' };
    expect(differences(baseline, baseline)).toEqual([]);
    expect(
      differences(baseline, {
        packages: ['b', 'c'],
        files: ['/sdcard/DCIM', '/sdcard/x'],
        wifiOn: false,
        locale: 'fi-FI',
      }),
    ).toEqual([
      'still installed: c',
      'missing since the baseline: a',
      'files still there: /sdcard/x',
      'Wi-Fi is off',
      'the locale is fi-FI, not en-US (setting it back needs a rooted phone)',
    ]);
  });

  it('turns locales into language tags and refuses anything else', () => {
    expect(languageTag('fi_FI')).toBe('fi-FI');
    expect(languageTag('zh-Hans-CN')).toBe('zh-Hans-CN');
    expect(() => languageTag("en'; reboot")).toThrow(SettingsRefused);
  });

  it('finds the ADB server the way the adb command line does', () => {
    expect(adbServerFromEnv({})).toEqual({ host: '127.0.0.1', port: 5037 });
    expect(adbServerFromEnv({ ANDROID_ADB_SERVER_PORT: '5038' })).toEqual({ host: '127.0.0.1', port: 5038 });
    expect(adbServerFromEnv({ ADB_SERVER_SOCKET: 'tcp:10.0.0.5:5037', ANDROID_ADB_SERVER_PORT: '1' })).toEqual({
      host: '10.0.0.5',
      port: 5037,
    });
    expect(adbServerFromEnv({ ANDROID_ADB_SERVER_PORT: 'nonsense' })).toEqual({ host: '127.0.0.1', port: 5037 });
  });
});
