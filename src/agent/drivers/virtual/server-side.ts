/**
 * Server-side test packages on a virtual device: the app is "installed" into the device's folder,
 * then the package runs as on any device host (../host/test-script.ts), and the CPU and memory of
 * its whole process session stand for the app's.
 */
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

export async function runServerSide(
  job: Job,
  context: ExecutionContext,
  device: VirtualDeviceSpec,
  state: DeviceState,
  sandbox: Sandbox,
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
