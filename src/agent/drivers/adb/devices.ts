/** What a phone is, from its properties (fixed by the service: no run changes them). */
import type { ExecutionKind } from '../../../domain/frameworks-kinds.ts';
import type { DeviceDescription } from '../../driver.ts';

/**
 * What a real Android phone runs here: instrumentation and UI Automator through `am instrument`,
 * server-side packages (Appium, Calabash, anything with run-tests.sh) next to it, the crawler, and
 * interactive sessions (input through `input`, frames through `screencap`).
 * Appium client side is added when the host runs Appium (AdbDriverOptions.appium).
 */
export const ADB_KINDS: readonly ExecutionKind[] = [
  'instrumentation',
  'uiautomator',
  'server-side',
  'calabash',
  'crawler',
  'interactive',
];

export function describeDevice(serial: string, properties: Readonly<Record<string, string>>): DeviceDescription {
  const raw = (properties['ro.product.manufacturer'] ?? '').trim();
  const manufacturer = raw === '' ? 'Unknown' : raw[0]!.toUpperCase() + raw.slice(1);
  const model = (properties['ro.product.model'] ?? '').trim() || serial;
  const sdk = Number.parseInt(properties['ro.build.version.sdk'] ?? '', 10);
  return {
    serial,
    // Phones name themselves either way: "Pixel 7" (Google) or "Moto G (5)"; do not say "Motorola Motorola".
    displayName: model.toLowerCase().startsWith(manufacturer.toLowerCase()) ? model : `${manufacturer} ${model}`,
    manufacturer,
    osType: 'ANDROID',
    platform: 'ANDROID',
    releaseVersion: (properties['ro.build.version.release'] ?? '').trim() || 'unknown',
    apiLevel: Number.isSafeInteger(sdk) ? sdk : null,
    executionKinds: ADB_KINDS,
    // Tablets build with the `tablet` characteristic (it picks their resources); phones with `default`/`nosdcard`.
    formFactor: (properties['ro.build.characteristics'] ?? '').split(',').includes('tablet') ? 'TABLET' : 'PHONE',
  };
}
