/**
 * What `am instrument` does on the fake, by test package: replay a recording over a second or two
 * (so that the driver samples CPU and memory meanwhile), or run until stopped, and possibly change
 * the device on the way, or report on the device's state (for the "leaves a trace" / "expects a
 * clean device" conformance cases).
 */
import type { FakeDevice } from './device.ts';
import { recording } from './device.ts';

export interface Scenario {
  /** The status stream to replay; `endless` scenarios print this and then wait to be stopped. */
  output(device: FakeDevice): string;
  readonly durationMs?: number;
  readonly endless?: boolean;
  /** Changes the test makes to the device. */
  effects?(device: FakeDevice): void;
}

const replay = (name: string, extra: Partial<Scenario> = {}): Scenario => ({
  output: () => recording(name),
  durationMs: 1600,
  ...extra,
});

function status(className: string, test: string, code: number, stack?: string): string {
  return [
    `INSTRUMENTATION_STATUS: class=${className}`,
    'INSTRUMENTATION_STATUS: current=1',
    'INSTRUMENTATION_STATUS: id=AndroidJUnitRunner',
    'INSTRUMENTATION_STATUS: numtests=1',
    ...(stack === undefined ? [] : [`INSTRUMENTATION_STATUS: stack=${stack}`]),
    `INSTRUMENTATION_STATUS: stream=${code === 0 ? '.' : ''}`,
    `INSTRUMENTATION_STATUS: test=${test}`,
    `INSTRUMENTATION_STATUS_CODE: ${code}`,
  ].join('\n');
}

/** What a test would see of what an earlier run left behind. */
export function tracesOf(device: FakeDevice): string[] {
  return [
    ...device.below('/sdcard').filter((file) => file.includes('left-behind')),
    ...device.below('/data/local/tmp'),
    ...[...device.packages.keys()].filter((name) => name.startsWith('com.devicecloud.trace')),
    ...(device.settings.get('global/wifi_on') === '1' ? [] : ['Wi-Fi left off']),
  ];
}

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'com.devicecloud.sample.test': replay('instrument-passing.txt'),
  'com.devicecloud.failing.test': replay('instrument-failing.txt'),
  'com.devicecloud.crash.test': replay('instrument-crash.txt'),
  'com.devicecloud.endless.test': {
    output: () => status('com.devicecloud.sample.SoakTest', 'testForever', 1),
    endless: true,
  },
  'com.devicecloud.trace.test': {
    output: () =>
      `${status('com.devicecloud.trace.TraceTest', 'testLeaveTrace', 1)}\n${status('com.devicecloud.trace.TraceTest', 'testLeaveTrace', 0)}\nINSTRUMENTATION_RESULT: stream=\nOK (1 test)\nINSTRUMENTATION_CODE: -1\n`,
    durationMs: 400,
    effects(device) {
      device.writeFile('/sdcard/Download/left-behind.txt', Buffer.from('secret\n'));
      device.writeFile('/data/local/tmp/trace.bin', Buffer.from([1, 2, 3]));
      device.settings.set('global/wifi_on', '0');
    },
  },
  'com.devicecloud.check.test': {
    output(device) {
      const traces = tracesOf(device);
      const end =
        traces.length === 0
          ? status('com.devicecloud.check.CleanTest', 'testNothingLeftBehind', 0)
          : status(
              'com.devicecloud.check.CleanTest',
              'testNothingLeftBehind',
              -2,
              `java.lang.AssertionError: found ${traces.join(', ')}\n\tat com.devicecloud.check.CleanTest.testNothingLeftBehind(CleanTest.java:21)`,
            );
      return `${status('com.devicecloud.check.CleanTest', 'testNothingLeftBehind', 1)}\n${end}\nINSTRUMENTATION_RESULT: stream=\nINSTRUMENTATION_CODE: -1\n`;
    },
    durationMs: 400,
  },
};
