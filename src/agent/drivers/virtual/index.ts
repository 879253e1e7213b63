/**
 * The virtual driver: a simulated fleet for development, CI and the local cloud that runs
 * server-side test packages and the crawler for real (see server-side.ts, crawler.ts), and whose
 * devices have state on disk that cleaning really removes (device-state.ts). Frameworks that need
 * a real phone are not among its execution kinds, so such runs are EXCLUDED, never faked.
 */
import type { Driver } from '../../driver.ts';
import type { Sandbox } from '../host/sandbox.ts';
import { crawl } from './crawler.ts';
import { DeviceState } from './device-state.ts';
import { VIRTUAL_KINDS, type VirtualDeviceSpec, defaultVirtualDevices } from './devices.ts';
import { runServerSide } from './server-side.ts';
import { serveAppiumClient } from './appium-client.ts';

export { defaultVirtualDevices, type VirtualDeviceSpec };

/** `sandbox` holds the customer code of server-side packages (../host/sandbox.ts). */
export function createVirtualDriver(options: {
  dataDir: string;
  devices: readonly VirtualDeviceSpec[];
  sandbox: Sandbox;
}): Driver {
  const devices = new Map(options.devices.map((device) => [device.serial, device]));
  const states = new Map(
    options.devices.map((device) => [device.serial, new DeviceState(options.dataDir, device.serial, device.osType)]),
  );
  for (const state of states.values()) state.ensure();
  const lookup = (serial: string) => {
    const device = devices.get(serial);
    const state = states.get(serial);
    if (device === undefined || state === undefined) throw new Error(`no virtual device ${serial}`);
    return { device, state };
  };

  return {
    name: 'virtual',
    async listDevices() {
      return options.devices.map((device) => ({ ...device, platform: device.osType, executionKinds: VIRTUAL_KINDS }));
    },
    async health(serial) {
      const { state } = lookup(serial);
      return state.hasHook('offline')
        ? { ok: false, reason: 'the device is offline (test hook offline)' }
        : { ok: true };
    },
    async execute(job, context) {
      const { device, state } = lookup(job.serial);
      context.step('PREPARING');
      if (job.deviceSettings !== null) state.applySettings(job.deviceSettings);
      switch (job.kind) {
        case 'server-side':
          return runServerSide(job, context, device, state, options.sandbox);
        case 'crawler':
          return crawl(job, context, device, state);
        case 'appium-client':
          return serveAppiumClient(job, context, device, state);
        default:
          return {
            outcome: 'INFRA_ERROR',
            failReason: `virtual devices cannot run ${job.kind} tests; they need a real device`,
            testCases: null,
            exitCode: null,
            artifacts: [],
          };
      }
    },
    async clean(serial, kind) {
      return lookup(serial).state.clean(kind);
    },
    async close() {},
  };
}
