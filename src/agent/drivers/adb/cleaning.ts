/**
 * Cleaning a phone after every device run, and before the first. FULL (private and enterprise
 * clouds): uninstall every package that is not in its baseline, clear the browsers' data, delete
 * files that tests left in shared storage and /data/local/tmp, put Wi-Fi and the locale back,
 * remove Google accounts the baseline does not hold (through Settings: google-account.ts),
 * reboot (which also ends anything a crashed agent left running) and wait until it has booted,
 * then verify all of it against the baseline. LIGHT (the public cloud, docs/api.md#deployment-flavours):
 * the same but for the reboot, checked for the packages and accounts. Files a run left in storage go on every
 * flavour: on the public cloud the next run is a stranger's. The residue LIGHT may leave is what
 * only a reboot clears (processes, caches of the system).
 */
import type { CleaningKind } from '../../../domain/flavours.ts';
import type { CleanResult } from '../../driver.ts';
import type { Baseline } from './baseline.ts';
import { readState, storageEntries } from './baseline.ts';
import { rebootAndWait } from './boot.ts';
import type { DeviceIo } from './device-io.ts';
import { type DeviceAccount, parsePackageList } from './device-output.ts';
import { googleAccounts, readAccounts, removeGoogleAccount } from './google-account.ts';
import { setWifi } from './settings.ts';
import type { DeviceTracker } from './tracker.ts';
import { DEFAULT_UI_TIMINGS } from './ui-automator.ts';
import { UiFlowError, type UiFlowOptions } from './ui-flow.ts';

/** Browsers whose data (history, cookies, sign-ins) one run must not hand to the next. */
export const BROWSERS = [
  'com.android.chrome',
  'com.android.browser',
  'com.sec.android.app.sbrowser',
  'org.mozilla.firefox',
  'com.microsoft.emmx',
];

export async function cleanDevice(
  io: DeviceIo,
  tracker: DeviceTracker,
  baseline: Baseline,
  bootTimeoutMs: number,
  kind: CleaningKind = 'FULL',
  ui: UiFlowOptions = { timings: DEFAULT_UI_TIMINGS, log: () => undefined },
): Promise<CleanResult> {
  const done: string[] = [];
  const problems: string[] = [];

  const installed = parsePackageList(await io.shell('pm list packages'));
  const extra = installed.filter((name) => !baseline.packages.includes(name));
  for (const name of extra) {
    const output = await io.shell(['pm', 'uninstall', name]);
    if (!/^Success/m.test(output)) problems.push(`${name} could not be uninstalled (${output.trim().slice(0, 120)})`);
  }
  done.push(`uninstalled ${extra.length} package(s)${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`);

  const browsers = BROWSERS.filter((name) => installed.includes(name));
  for (const name of browsers) {
    const output = await io.shell(['pm', 'clear', name]);
    if (!/^Success/m.test(output))
      problems.push(`the data of ${name} could not be cleared (${output.trim().slice(0, 120)})`);
  }
  if (browsers.length > 0) done.push(`cleared ${browsers.join(', ')}`);

  const left = newEntries(await storageEntries(io), baseline.files);
  for (let at = 0; at < left.length; at += 50) await io.shell(['rm', '-rf', ...left.slice(at, at + 50)]);
  done.push(`deleted ${left.length} file(s) and folder(s) left in storage`);

  const wifi = (await io.shell(['settings', 'get', 'global', 'wifi_on'])).trim();
  if ((wifi === '1' || wifi === '2') !== baseline.wifiOn) {
    await setWifi(io, baseline.wifiOn).catch((error: Error) => problems.push(error.message));
    done.push(`turned Wi-Fi ${baseline.wifiOn ? 'on' : 'off'}`);
  }
  if ((await io.getprop('persist.sys.locale')) !== baseline.locale) {
    await io.shell(['setprop', 'persist.sys.locale', baseline.locale]);
    done.push(`set the locale back to ${baseline.locale || '(unset)'}`);
  }
  if (baseline.accounts !== undefined) {
    const extra = googleAccounts(await readAccounts(io)).filter(
      (name) => !googleAccounts(baseline.accounts!).includes(name),
    );
    const removed: string[] = [];
    for (const name of extra) {
      try {
        await removeGoogleAccount(io, name, ui);
        removed.push(name);
      } catch (error) {
        problems.push(
          error instanceof UiFlowError
            ? error.message
            : `removing the Google account ${name} failed: ${(error as Error).message}`,
        );
      }
    }
    if (removed.length > 0) done.push(`removed the Google account(s) ${removed.join(', ')}`);
  }

  if (kind === 'LIGHT') {
    const still = parsePackageList(await io.shell('pm list packages')).filter(
      (name) => !baseline.packages.includes(name),
    );
    if (still.length > 0) problems.push(`still installed: ${still.join(', ')}`);
    if (baseline.accounts !== undefined)
      problems.push(...accountDifferences(baseline.accounts, await readAccounts(io)));
    if (problems.length > 0)
      return {
        ok: false,
        report: `cleaning left the phone unlike its baseline: ${problems.join('; ')} (${done.join(', ')})`,
      };
    return {
      ok: true,
      report: `${done.join(', ')} (light cleaning: no reboot); packages verified against the baseline of ${baseline.recordedAt}`,
    };
  }
  try {
    await rebootAndWait(io, tracker, bootTimeoutMs);
    done.push('rebooted');
  } catch (error) {
    return { ok: false, report: `${(error as Error).message} (${done.join(', ')})` };
  }

  problems.push(...differences(baseline, await readState(io)));
  if (problems.length > 0)
    return {
      ok: false,
      report: `cleaning left the phone unlike its baseline: ${problems.join('; ')} (${done.join(', ')})`,
    };
  return { ok: true, report: `${done.join(', ')}; verified against the baseline of ${baseline.recordedAt}` };
}

/** Entries that are not in the baseline, without those inside a new folder (deleting the folder takes them). */
export function newEntries(now: readonly string[], baseline: readonly string[]): string[] {
  const known = new Set(baseline);
  const fresh = now.filter((entry) => !known.has(entry)).sort();
  return fresh.filter((entry) => !fresh.some((other) => other !== entry && entry.startsWith(`${other}/`)));
}

export function differences(baseline: Omit<Baseline, 'recordedAt'>, now: Omit<Baseline, 'recordedAt'>): string[] {
  const found: string[] = [];
  const extra = now.packages.filter((name) => !baseline.packages.includes(name));
  const missing = baseline.packages.filter((name) => !now.packages.includes(name));
  if (extra.length > 0) found.push(`still installed: ${extra.join(', ')}`);
  if (missing.length > 0) found.push(`missing since the baseline: ${missing.join(', ')}`);
  const files = newEntries(now.files, baseline.files);
  if (files.length > 0)
    found.push(`files still there: ${files.slice(0, 10).join(', ')}${files.length > 10 ? ', …' : ''}`);
  if (now.wifiOn !== baseline.wifiOn) found.push(`Wi-Fi is ${now.wifiOn ? 'on' : 'off'}`);
  if (now.locale !== baseline.locale)
    found.push(
      `the locale is ${now.locale || '(unset)'}, not ${baseline.locale || '(unset)'} (setting it back needs a rooted phone)`,
    );
  if (baseline.accounts !== undefined && now.accounts !== undefined)
    found.push(...accountDifferences(baseline.accounts, now.accounts));
  return found;
}

/**
 * Google accounts only: other apps' accounts go with their uninstall, and some system apps add
 * their own by themselves after a reboot, which would fail cleanings for nothing.
 */
function accountDifferences(baseline: readonly DeviceAccount[], now: readonly DeviceAccount[]): string[] {
  const before = googleAccounts(baseline);
  const after = googleAccounts(now);
  const extra = after.filter((name) => !before.includes(name));
  const missing = before.filter((name) => !after.includes(name));
  return [
    ...(extra.length > 0 ? [`Google account(s) still signed in: ${extra.join(', ')}`] : []),
    ...(missing.length > 0
      ? [`Google account(s) signed out since the baseline: ${missing.join(', ')} (sign them in again by hand)`]
      : []),
  ];
}
