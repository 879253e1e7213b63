/**
 * Cleaning an iOS device after every device run (and when the agent first sees it): every app not
 * in the device's baseline is uninstalled (its data goes with it), the language and region are put
 * back, the device is rebooted (which also ends anything a crashed agent left running on it), the
 * agent waits until it is back and remounts the developer disk image a reboot unmounts, and then
 * checks that what it removed is really gone. Safari's own data stays: go-ios has no way to clear
 * it short of erasing the device.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CleaningKind } from '../../../domain/flavours.ts';
import type { CleanResult } from '../../driver.ts';
import type { Baseline, DeviceRecords } from './device-records.ts';
import type { GoIos } from './go-ios.ts';

export interface CleaningDeps {
  readonly goIos: GoIos;
  readonly records: DeviceRecords;
  /** Where `ios image auto` keeps the developer disk images it downloads. */
  readonly imageDir: string;
  /** How long a reboot may take until the device answers again. */
  readonly bootTimeoutMs: number;
  readonly pollMs: number;
}

/** Records the baseline of a device seen for the first time; answers the device's baseline. */
export async function ensureBaseline(deps: Pick<CleaningDeps, 'goIos' | 'records'>, udid: string): Promise<Baseline> {
  const known = deps.records.baseline(udid);
  if (known !== null) return known;
  const apps = await deps.goIos.apps(udid);
  const language = await deps.goIos.language(udid);
  const baseline = { apps: apps.map((app) => app.bundleId).sort(), language, recordedAt: new Date().toISOString() };
  deps.records.saveBaseline(udid, baseline);
  return baseline;
}

/** FULL (private and enterprise clouds) reboots; LIGHT (the public cloud) does all but the reboot. */
export async function cleanDevice(deps: CleaningDeps, udid: string, kind: CleaningKind = 'FULL'): Promise<CleanResult> {
  const done: string[] = [];
  try {
    const baseline = await ensureBaseline(deps, udid);
    const extra = (await deps.goIos.apps(udid))
      .map((app) => app.bundleId)
      .filter((bundleId) => !baseline.apps.includes(bundleId))
      .sort();
    for (const bundleId of extra) await deps.goIos.uninstall(udid, bundleId);
    done.push(extra.length === 0 ? 'no apps to remove' : `removed ${extra.length} app(s) (${extra.join(', ')})`);

    const language = await deps.goIos.language(udid);
    if (language.locale !== baseline.language.locale || language.language !== baseline.language.language) {
      await deps.goIos.language(udid, baseline.language);
      done.push(`restored language ${baseline.language.language} and region ${baseline.language.locale}`);
    }

    if (kind === 'FULL') {
      await deps.goIos.reboot(udid);
      await waitForReboot(deps, udid);
      done.push('rebooted');
      await deps.goIos.mountDeveloperImage(udid, deps.imageDir);
      done.push('mounted the developer disk image');
    } else done.push('no reboot (light cleaning)');

    const left = (await deps.goIos.apps(udid))
      .map((app) => app.bundleId)
      .filter((bundleId) => !baseline.apps.includes(bundleId));
    if (left.length > 0)
      return { ok: false, report: `cleaning left ${left.join(', ')} installed (${done.join(', ')})` };
    const after = await deps.goIos.language(udid);
    if (after.locale !== baseline.language.locale)
      return {
        ok: false,
        report: `cleaning left region ${after.locale} instead of ${baseline.language.locale} (${done.join(', ')})`,
      };
    return { ok: true, report: `${done.join(', ')}, verified` };
  } catch (error) {
    return { ok: false, report: `${(error as Error).message}${done.length > 0 ? ` (after: ${done.join(', ')})` : ''}` };
  }
}

/**
 * A rebooting iPhone stays listed for a few seconds before it drops off USB: first wait until it
 * has gone, so that it is not taken for back, then until it is listed and answers again.
 */
async function waitForReboot(deps: CleaningDeps, udid: string): Promise<void> {
  const deadline = Date.now() + deps.bootTimeoutMs;
  const listed = async () => {
    try {
      return (await deps.goIos.list()).some((device) => device.udid === udid);
    } catch {
      return false;
    }
  };
  while (await listed()) {
    if (Date.now() > deadline)
      throw new Error(
        `the device did not restart within ${Math.round(deps.bootTimeoutMs / 1000)} s of the reboot command`,
      );
    await sleep(deps.pollMs);
  }
  for (;;) {
    if (await listed()) {
      try {
        await deps.goIos.apps(udid);
        return;
      } catch {
        // Listed before its services answer: still booting.
      }
    }
    if (Date.now() > deadline)
      throw new Error(`the device did not come back within ${Math.round(deps.bootTimeoutMs / 1000)} s of the reboot`);
    await sleep(deps.pollMs);
  }
}
