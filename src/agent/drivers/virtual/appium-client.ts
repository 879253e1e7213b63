/**
 * Appium client side on a virtual device (docs/api.md#appium-client-side): installs the app, then
 * serves the client's session from the device's own WebDriver (webdriver.ts) until it ends.
 */
import path from 'node:path';
import type { ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import { sessionLogPath, sessionResult } from '../../webdriver-relay.ts';
import type { DeviceState } from './device-state.ts';
import type { VirtualDeviceSpec } from './devices.ts';
import { type VirtualApp, virtualWebDriver } from './webdriver.ts';

export async function serveAppiumClient(
  job: Job,
  context: ExecutionContext,
  device: VirtualDeviceSpec,
  state: DeviceState,
): Promise<ExecutionResult> {
  if (context.webdriver === undefined) throw new Error('an Appium client side run without its WebDriver channel');
  let app: VirtualApp | null = null;
  if (job.app !== null) {
    const appId =
      job.app.properties.package_name ?? job.app.properties.bundle_identifier ?? path.basename(job.app.name);
    context.step('INSTALL');
    state.install(job.app.path, appId);
    const declared =
      device.osType === 'ANDROID'
        ? (job.app.properties.activities ?? job.app.properties.main_activity ?? '')
        : (job.app.properties.screens ?? '');
    const screens = declared
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    // The launch activity first, as the app opens on it.
    const main = job.app.properties.main_activity;
    if (main !== undefined && screens.includes(main)) {
      screens.splice(screens.indexOf(main), 1);
      screens.unshift(main);
    }
    app = { appId, screens };
  }
  context.step('RUNNING');
  const end = await context.webdriver.serve(virtualWebDriver(device, app));
  return sessionResult(end, `session on ${device.displayName}`, sessionLogPath(job.workDir));
}
