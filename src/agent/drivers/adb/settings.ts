/**
 * Device settings a run may ask for (private and enterprise clouds), applied over adb, and put
 * back by cleaning from the baseline (baseline.ts), which also undoes what tests changed.
 *
 * - Wi-Fi: `svc wifi enable|disable`, read back from `settings get global wifi_on`.
 * - Locale: since Android 13 a per-app locale for the app under test and its tests
 *   (`cmd locale set-app-locales`), which needs no root, is applied after install and goes with
 *   the uninstall. Before Android 13 the only way from a shell is the system locale,
 *   `setprop persist.sys.locale` plus a reboot, which user builds refuse unless the phone is
 *   rooted: such a run ends as an infrastructure error saying so rather than running in the
 *   wrong language.
 * - Google account (Android 8+): signed in through the add-account screens, driven with UI
 *   Automator (google-account.ts), before anything else, while the phone still has its network
 *   and its language; cleaning removes every Google account the baseline does not hold. A
 *   sign-in that needs a person (a second factor, a captcha) or fails (a wrong password) ends the
 *   run as an infrastructure error naming the screen, rather than running signed out.
 */
import type { DeviceSettings } from '../../driver.ts';
import type { DeviceIo } from './device-io.ts';
import { GOOGLE_ACCOUNT_MIN_API, SignInRefused, signInGoogleAccount, untypable } from './google-account.ts';
import { DEFAULT_UI_TIMINGS } from './ui-automator.ts';
import { UiFlowError, type UiFlowOptions } from './ui-flow.ts';

/**
 * The run asked for what this phone cannot do (a locale below Android 13 without root, an account
 * Google will not sign in here): the run ends WARNING as REFUSED, not held against the phone.
 */
export class SettingsRefused extends Error {}

/** Per-app locales arrived in Android 13 (API 33). */
export const PER_APP_LOCALE_API = 33;

/** `fi_FI` → `fi-FI`; anything that is not a plain language tag is refused before it reaches a shell. */
export function languageTag(locale: string): string {
  if (!/^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$/.test(locale))
    throw new SettingsRefused(`"${locale}" is not a locale (expected e.g. fi_FI)`);
  return locale.replaceAll('_', '-');
}

/** Before install: what can be set for the whole phone. Answers whether the phone must reboot for it. */
export async function applyDeviceSettings(
  io: DeviceIo,
  settings: DeviceSettings,
  apiLevel: number | null,
  signal: AbortSignal,
  ui: Omit<UiFlowOptions, 'signal'> = { timings: DEFAULT_UI_TIMINGS, log: () => undefined },
): Promise<{ reboot: boolean }> {
  if (settings.googleAccount !== null) {
    if ((apiLevel ?? 0) < GOOGLE_ACCOUNT_MIN_API)
      throw new SettingsRefused(
        `signing in a Google account is automated from Android 8 (API ${GOOGLE_ACCOUNT_MIN_API}); this phone runs API ${apiLevel ?? '?'}`,
      );
    // The screens are recognised in English; a system locale would change them, and cleaning's too.
    if (settings.locale !== null && (apiLevel ?? 0) < PER_APP_LOCALE_API)
      throw new SettingsRefused(
        'a Google account and a locale cannot both be set on a phone before Android 13 (the locale would change the language of the screens that sign the account in and out)',
      );
    const problem = untypable(settings.googleAccount);
    if (problem !== null) throw new SettingsRefused(problem);
    try {
      await signInGoogleAccount(io, settings.googleAccount, { ...ui, signal });
    } catch (error) {
      // A wrong password or a second factor is the account's; a screen that never came or was
      // not known is this phone's (or its Play services'), and counts against it like any failure.
      if (error instanceof SignInRefused) throw new SettingsRefused(error.message);
      if (error instanceof UiFlowError) throw new Error(error.message);
      throw error;
    }
  }
  let reboot = false;
  if (settings.locale !== null && (apiLevel ?? 0) < PER_APP_LOCALE_API) {
    const tag = languageTag(settings.locale);
    await io.shell(['setprop', 'persist.sys.locale', tag], { signal });
    if ((await io.getprop('persist.sys.locale', { signal })) !== tag) {
      throw new SettingsRefused(
        `this phone runs Android API ${apiLevel ?? '?'}: below Android 13 the locale can only be set as the system locale, which needs a rooted phone`,
      );
    }
    reboot = true;
  }
  if (settings.wifi !== null) await setWifi(io, settings.wifi, signal);
  return { reboot };
}

/** After install: the per-app locale of the app and its tests (Android 13+). */
export async function applyAppLocale(
  io: DeviceIo,
  settings: DeviceSettings | null,
  apiLevel: number | null,
  packages: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  if (settings?.locale == null || (apiLevel ?? 0) < PER_APP_LOCALE_API) return;
  const tag = languageTag(settings.locale);
  for (const packageName of packages) {
    const output = await io.shell(
      ['cmd', 'locale', 'set-app-locales', packageName, '--user', 'current', '--locales', tag],
      { signal },
    );
    if (output.trim() !== '')
      throw new SettingsRefused(`the locale of ${packageName} could not be set: ${output.trim().slice(0, 200)}`);
  }
}

export async function setWifi(io: DeviceIo, on: boolean, signal?: AbortSignal): Promise<void> {
  await io.shell(['svc', 'wifi', on ? 'enable' : 'disable'], { signal });
  const now = (await io.shell(['settings', 'get', 'global', 'wifi_on'], { signal })).trim();
  // Not a refusal: every phone can toggle Wi-Fi, so one that does not is in trouble.
  if ((now === '1' || now === '2') !== on)
    throw new Error(`Wi-Fi could not be turned ${on ? 'on' : 'off'} (wifi_on is ${now})`);
}
