/** Picks the driver an agent uses (`--driver`). */
import path from 'node:path';
import type { AgentConfig, Driver as DriverName } from '../../config-agent.ts';
import { ConfigError } from '../../config-values.ts';
import type { Driver } from '../driver.ts';
import type { Sandbox } from './host/sandbox.ts';
import { adbServerFromEnv, createAdbDriver } from './adb/index.ts';
import { iosDriverFromSettings } from './ios/index.ts';
import { createVirtualDriver, defaultVirtualDevices } from './virtual/index.ts';

export interface DriverOptions {
  readonly dataDir: string;
  /** Virtual driver: how many devices, two thirds of them Android. */
  readonly virtualDevices: number;
  /** Virtual driver: the start of the serials (unique per host within a cloud). */
  readonly virtualPrefix?: string;
  /** iOS driver: go-ios (else found), the service's signing folder, the signer (go-ios or a zsign path). */
  readonly ios?: { readonly binary?: string; readonly signingDir?: string; readonly signer?: string };
  /** Where customer code runs (host/sandbox-choice.ts decides). */
  readonly sandbox: Sandbox;
}

export function createDriver(name: DriverName, options: DriverOptions): Driver {
  switch (name) {
    case 'virtual': {
      const ios = Math.floor(options.virtualDevices / 3);
      return createVirtualDriver({
        dataDir: path.join(options.dataDir, 'virtual'),
        devices: defaultVirtualDevices(options.virtualDevices - ios, ios, options.virtualPrefix),
        sandbox: options.sandbox,
      });
    }
    case 'adb':
      // The ADB server is found the way the adb command line finds it (ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT).
      return createAdbDriver({
        dataDir: path.join(options.dataDir, 'adb'),
        server: adbServerFromEnv(process.env),
        hostEnv: process.env,
        sandbox: options.sandbox,
        // docs/device-hosts.md#appium-for-client-side-sessions
        appium: process.env.DEVICECLOUD_APPIUM || undefined,
      });
    case 'ios':
      try {
        return iosDriverFromSettings({ dataDir: path.join(options.dataDir, 'ios'), ...options.ios });
      } catch (error) {
        throw new ConfigError(`The ios driver cannot start: ${(error as Error).message}`);
      }
  }
}

/** The driver a role's settings ask for (`--driver` and its options). */
export function driverFromConfig(config: AgentConfig, dataDir: string, sandbox: Sandbox): Driver {
  return createDriver(config.driver, {
    dataDir,
    sandbox,
    virtualDevices: config.virtualDevices,
    virtualPrefix: config.virtualPrefix,
    ios: { binary: config.iosBinary, signingDir: config.iosSigningDir, signer: config.iosSigner },
  });
}
