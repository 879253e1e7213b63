/** Picks the driver an agent uses (`--driver`). */
import path from 'node:path';
import type { Driver as DriverName } from '../../config.ts';
import { ConfigError } from '../../config.ts';
import type { Driver } from '../driver.ts';
import { createVirtualDriver, defaultVirtualDevices } from './virtual/index.ts';

export interface DriverOptions {
  readonly dataDir: string;
  /** Virtual driver: how many devices, two thirds of them Android. */
  readonly virtualDevices: number;
  /** Virtual driver: the start of the serials (unique per host within a cloud). */
  readonly virtualPrefix?: string;
}

export function createDriver(name: DriverName, options: DriverOptions): Driver {
  switch (name) {
    case 'virtual': {
      const ios = Math.floor(options.virtualDevices / 3);
      return createVirtualDriver({ dataDir: path.join(options.dataDir, 'virtual'), devices: defaultVirtualDevices(options.virtualDevices - ios, ios, options.virtualPrefix) });
    }
    case 'adb':
    case 'ios':
      throw new ConfigError(`The ${name} driver is not available in this version; use --driver virtual`);
  }
}
