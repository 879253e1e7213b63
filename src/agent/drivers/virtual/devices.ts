/** The virtual fleet: realistic models with stable serials, so a restarted agent reports the same devices. */
import type { ExecutionKind } from '../../../domain/frameworks-kinds.ts';

export interface VirtualDeviceSpec {
  readonly serial: string;
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: 'ANDROID' | 'IOS';
  readonly releaseVersion: string;
  readonly apiLevel: number | null;
}

/** What virtual devices can honestly run; instrumentation, XCTest and the like need a real device. */
export const VIRTUAL_KINDS: readonly ExecutionKind[] = ['server-side', 'crawler', 'appium-client', 'interactive'];

const ANDROID_MODELS: ReadonlyArray<Omit<VirtualDeviceSpec, 'serial' | 'osType'>> = [
  { displayName: 'Google Pixel 8', manufacturer: 'Google', releaseVersion: '14', apiLevel: 34 },
  { displayName: 'Samsung Galaxy S24', manufacturer: 'Samsung', releaseVersion: '14', apiLevel: 34 },
  { displayName: 'Google Pixel 6a', manufacturer: 'Google', releaseVersion: '13', apiLevel: 33 },
  { displayName: 'OnePlus Nord 2', manufacturer: 'OnePlus', releaseVersion: '12', apiLevel: 31 },
  { displayName: 'Motorola Moto G54', manufacturer: 'Motorola', releaseVersion: '14', apiLevel: 34 },
  { displayName: 'Xiaomi Redmi Note 12', manufacturer: 'Xiaomi', releaseVersion: '13', apiLevel: 33 },
];

const IOS_MODELS: ReadonlyArray<Omit<VirtualDeviceSpec, 'serial' | 'osType'>> = [
  { displayName: 'Apple iPhone 15', manufacturer: 'Apple', releaseVersion: '17.4', apiLevel: null },
  { displayName: 'Apple iPhone 13', manufacturer: 'Apple', releaseVersion: '16.7', apiLevel: null },
  { displayName: 'Apple iPhone SE (3rd generation)', manufacturer: 'Apple', releaseVersion: '17.2', apiLevel: null },
];

export function defaultVirtualDevices(android = 4, ios = 2, prefix = 'virtual'): VirtualDeviceSpec[] {
  const make = (models: typeof ANDROID_MODELS, osType: 'ANDROID' | 'IOS', count: number) =>
    Array.from({ length: count }, (_, index) => {
      const model = models[index % models.length]!;
      const copy = Math.floor(index / models.length);
      return {
        ...model,
        osType,
        serial: `${prefix}-${osType.toLowerCase()}-${index + 1}`,
        displayName: copy === 0 ? model.displayName : `${model.displayName} #${copy + 1}`,
      };
    });
  return [...make(ANDROID_MODELS, 'ANDROID', android), ...make(IOS_MODELS, 'IOS', ios)];
}
