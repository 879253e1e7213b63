/**
 * Device settings a run may ask for (private and enterprise clouds). On iOS go-ios can set the
 * language and region (`ios lang`), which cleaning restores from the baseline. It cannot switch
 * Wi-Fi (it only installs Wi-Fi profiles, which need a tap on the device unless it is supervised)
 * and iOS has no Google account of its own: a run asking for either is refused with the setting
 * named, rather than run with the setting silently ignored.
 */
import type { DeviceSettings } from '../../driver.ts';
import type { GoIos } from './go-ios.ts';
import type { Language } from './go-ios-output.ts';

const LOCALE = /^([a-z]{2,3})(?:[_-][A-Za-z0-9]{2,8})*$/;

/** Why the settings cannot be applied on iOS, or null when they can. */
export function unsupportedSetting(settings: DeviceSettings): string | null {
  if (settings.wifi !== null)
    return `the run asks to switch Wi-Fi ${settings.wifi ? 'on' : 'off'}, which iOS devices in this cloud cannot do (go-ios cannot toggle Wi-Fi); run it without the Wi-Fi setting`;
  if (settings.googleAccount !== null)
    return 'the run asks to sign in a Google account, which iOS devices do not have; run it without the Google account setting';
  if (settings.locale !== null && !LOCALE.test(settings.locale))
    return `the run asks for locale "${settings.locale}", which is not a locale such as fi_FI`;
  return null;
}

/** The language and region for a locale: `fi_FI` → language fi, region fi_FI. */
export function languageOf(locale: string): Language {
  const normalized = locale.replace('-', '_');
  return { language: normalized.split('_')[0]!, locale: normalized };
}

export async function applyLocale(goIos: GoIos, udid: string, locale: string): Promise<void> {
  const wanted = languageOf(locale);
  const now = await goIos.language(udid, wanted);
  if (now.locale !== wanted.locale)
    throw new Error(`the device kept locale ${now.locale} after being set to ${wanted.locale}`);
}
