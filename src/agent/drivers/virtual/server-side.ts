/**
 * Server-side test packages on a virtual device: the app is "installed" into the device's folder,
 * then the package runs as on any device host (../host/test-script.ts), and the CPU and memory of
 * its whole process session stand for the app's.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import type { Sandbox } from '../host/sandbox.ts';
import {
  baseScriptEnv,
  collectScriptOutputs,
  prepareTestScript,
  runTestScript,
  withParameters,
} from '../host/test-script.ts';
import type { DeviceState, VirtualSettings } from './device-state.ts';
import type { VirtualDeviceSpec } from './devices.ts';
import type { LiveScreen } from './screen/live.ts';
import { appScreen, testsScreen, withBanner } from './screen/ui-model.ts';

export async function runServerSide(
  job: Job,
  context: ExecutionContext,
  device: VirtualDeviceSpec,
  state: DeviceState,
  sandbox: Sandbox,
  screen: LiveScreen,
): Promise<ExecutionResult> {
  const infra = (failReason: string): ExecutionResult => ({
    outcome: 'INFRA_ERROR',
    failReason,
    testCases: null,
    exitCode: null,
    artifacts: [],
  });
  const { tests } = job;
  if (tests === null) return infra('no test package (a zip with run-tests.sh) was given');
  context.step('INSTALL');
  if (job.app !== null) {
    const id = job.app.properties.package_name ?? job.app.properties.bundle_identifier ?? job.app.name;
    screen.show(appScreen(device.osType, id, job.app.properties.main_activity ?? 'Main'));
  }
  const appPath =
    job.app === null
      ? ''
      : state.install(
          job.app.path,
          job.app.properties.package_name ?? job.app.properties.bundle_identifier ?? path.basename(job.app.path),
        );
  const layout = await prepareTestScript({ ...job, tests }, context);
  if ('failReason' in layout) return infra(layout.failReason);

  const appPackage = job.app?.properties.package_name ?? job.app?.properties.bundle_identifier ?? '';
  const env = withParameters(
    {
      ...baseScriptEnv(job, layout, device),
      APP_PATH: appPath,
      APP_PACKAGE: appPackage,
      DEVICE_STORAGE: state.storage,
      ...deviceSettingsEnv(state.settings()),
    },
    job.parameters,
  );

  context.step('RUNNING');
  // The device shows the app with what the tests print as they go: the video follows them.
  const shownId = appPackage || path.basename(tests.name, '.zip');
  screen.show(() => testsScreen(device.osType, shownId, lastLines(layout.logFile, 9)));
  const { exitCode, breach, startError } = await runTestScript(layout, {
    sandbox,
    env,
    // The device's storage is the device's: the script writes there as on a phone.
    writable: [state.storage],
    readOnly: appPath === '' ? [] : [appPath],
    signal: context.signal,
    onStart: (sid) => state.markRunning(sid),
    onSample: (sample) => context.sample({ timestamp: Date.now(), packageName: appPackage || null, ...sample }),
  });
  state.clearRunning();
  const ended = testsScreen(device.osType, shownId, lastLines(layout.logFile, 9));
  screen.show(
    exitCode === 0
      ? withBanner(ended, 'Tests ended', 'ok')
      : withBanner(ended, exitCode === null ? 'Tests stopped' : `Tests ended (exit ${exitCode})`, 'fail'),
  );
  if (startError !== null)
    return {
      outcome: 'INFRA_ERROR',
      failReason: `the sandbox could not start the tests: ${startError}`,
      testCases: null,
      exitCode: null,
      artifacts: collectScriptOutputs(layout),
    };
  const artifacts = collectScriptOutputs(layout);
  if (context.signal.aborted) return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode, artifacts };
  // A broken sandbox limit is the tests' doing: FAILED saying which limit, whatever they reported.
  if (breach !== null)
    return { outcome: 'CUSTOMER_FAULT', failReason: breach.message, testCases: null, exitCode, artifacts };
  return { outcome: 'COMPLETED', failReason: null, testCases: null, exitCode, artifacts };
}

function deviceSettingsEnv(settings: VirtualSettings): Record<string, string> {
  return {
    DEVICE_LOCALE: settings.locale,
    DEVICE_WIFI: settings.wifi ? 'on' : 'off',
    DEVICE_GOOGLE_ACCOUNT: settings.googleAccount ?? '',
  };
}

/** The last `count` non-empty lines of a log being written, read from its end. */
function lastLines(file: string, count: number): string[] {
  let text = '';
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, 4096);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-count);
}
