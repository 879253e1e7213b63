/**
 * Deployment flavours (docs/api.md#deployment-flavours): the same API everywhere; what differs is what may be
 * done to devices. On the public cloud a run cannot change device settings, and cleaning between
 * runs is the lighter kind; private and enterprise clouds allow both.
 */
import { ForbiddenError, InvalidParameterError } from './errors.ts';

export const FLAVOURS = ['public', 'private', 'enterprise'] as const;
export type Flavour = (typeof FLAVOURS)[number];

/** What a run asks the device to become; `null` leaves a setting as it is. */
export interface DeviceSettings {
  /** The device's system locale, e.g. fi_FI (not deviceLanguageCode, which only the tests see). */
  readonly locale: string | null;
  readonly wifi: boolean | null;
  readonly googleAccount: { readonly email: string; readonly password: string } | null;
}

/** The run config fields that carry device settings, as the error names them. */
export interface DeviceSettingsFields {
  readonly deviceLocale: string | null;
  readonly wifiEnabled: boolean | null;
  readonly googleAccountEmail: string | null;
  readonly googleAccountPassword: string | null;
}

const SETTINGS_FIELDS = [
  'deviceLocale',
  'wifiEnabled',
  'googleAccountEmail',
  'googleAccountPassword',
] as const satisfies readonly (keyof DeviceSettingsFields)[];

/**
 * What customer code on a device host may reach: none (only its sandbox's own loopback; the
 * public flavour's, which allows nothing else) or host (the host's network, loopback included).
 */
export const SANDBOX_NETWORKS = ['none', 'host'] as const;
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

/** FULL: uninstall, clear, revert settings, reboot, verify. LIGHT: the first three only. */
export const CLEANING_KINDS = ['FULL', 'LIGHT'] as const;
export type CleaningKind = (typeof CLEANING_KINDS)[number];

export function cleaningKind(flavour: Flavour): CleaningKind {
  return flavour === 'public' ? 'LIGHT' : 'FULL';
}

/**
 * The device settings a run asks for, or null when it asks for none; refused on the public cloud
 * with the rule and the fields named, before anything is stored.
 */
export function deviceSettingsOf(flavour: Flavour, fields: DeviceSettingsFields): DeviceSettings | null {
  const asked = SETTINGS_FIELDS.filter((name) => fields[name] !== null);
  if (asked.length === 0) return null;
  if (flavour === 'public') {
    throw new ForbiddenError(
      `On the public cloud device settings cannot be changed, Wi-Fi cannot be toggled and no Google account can be set on a device (${asked.join(', ')})`,
    );
  }
  if ((fields.googleAccountEmail === null) !== (fields.googleAccountPassword === null)) {
    const missing = fields.googleAccountEmail === null ? 'googleAccountEmail' : 'googleAccountPassword';
    throw new InvalidParameterError(
      missing,
      `Parameter '${missing}' is required with a Google account: give both googleAccountEmail and googleAccountPassword`,
    );
  }
  return {
    locale: fields.deviceLocale,
    wifi: fields.wifiEnabled,
    googleAccount:
      fields.googleAccountEmail === null
        ? null
        : { email: fields.googleAccountEmail, password: fields.googleAccountPassword! },
  };
}

/**
 * iOS gives a device host no way to toggle Wi-Fi or sign in to an account (docs/drivers.md): such
 * a run is refused when it starts rather than failing on every device.
 */
export function checkSettingsSupported(osType: 'ANDROID' | 'IOS', settings: DeviceSettings): void {
  if (osType !== 'IOS') return;
  if (settings.wifi !== null)
    throw new InvalidParameterError(
      'wifiEnabled',
      "Parameter 'wifiEnabled' cannot be used on iOS devices: iOS lets no device host toggle Wi-Fi",
    );
  if (settings.googleAccount !== null) {
    throw new InvalidParameterError(
      'googleAccountEmail',
      "Parameter 'googleAccountEmail' cannot be used on iOS devices: a Google account is signed in on Android devices only",
    );
  }
}
