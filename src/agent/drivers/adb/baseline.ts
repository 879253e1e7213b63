/**
 * A phone's baseline: what it held when this host first saw it (packages, files in shared storage
 * and /data/local/tmp, Wi-Fi, system locale, accounts). Cleaning puts the phone back to it and
 * checks that it did. It is kept under the agent's data dir (`adb/<serial>/baseline.json`), so it survives
 * agent restarts; an operator who changes a phone on purpose (installs a keyboard, say) deletes
 * the file and the next cleaning records the phone as it then is.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DeviceIo } from './device-io.ts';
import { type DeviceAccount, parsePackageList } from './device-output.ts';
import { readAccounts } from './google-account.ts';

export interface Baseline {
  readonly recordedAt: string;
  readonly packages: readonly string[];
  readonly files: readonly string[];
  readonly wifiOn: boolean;
  /** `persist.sys.locale`; empty on phones that never set it. */
  readonly locale: string;
  /**
   * From `dumpsys account`: a pool's Google account signed in by hand stays, any other goes.
   * Absent from baselines recorded before accounts were; completeBaseline fills it in.
   */
  readonly accounts?: readonly DeviceAccount[];
}

/** Where tests may leave files; /sdcard/Android/ is left out: each app's part of it goes with its uninstall. */
export const STORAGE_ROOTS = ['/sdcard/', '/data/local/tmp/'] as const;

export function baselinePath(dataDir: string, serial: string): string {
  return path.join(dataDir, serial.replace(/[^A-Za-z0-9._:-]/g, '_'), 'baseline.json');
}

export function loadBaseline(dataDir: string, serial: string): Baseline | null {
  try {
    return JSON.parse(fs.readFileSync(baselinePath(dataDir, serial), 'utf8')) as Baseline;
  } catch {
    return null;
  }
}

export async function recordBaseline(dataDir: string, io: DeviceIo): Promise<Baseline> {
  return saveBaseline(dataDir, io.serial, { recordedAt: new Date().toISOString(), ...(await readState(io)) });
}

/**
 * A baseline from before accounts were recorded takes the phone's accounts as they are now:
 * until then no run could sign one in, so they are the ones an operator put there.
 */
export async function completeBaseline(dataDir: string, io: DeviceIo, baseline: Baseline): Promise<Baseline> {
  if (baseline.accounts !== undefined) return baseline;
  return saveBaseline(dataDir, io.serial, { ...baseline, accounts: await readAccounts(io) });
}

function saveBaseline(dataDir: string, serial: string, baseline: Baseline): Baseline {
  const file = baselinePath(dataDir, serial);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(baseline, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
  return baseline;
}

/** The parts of the phone's state that a baseline holds, as they are now. */
export async function readState(io: DeviceIo, signal?: AbortSignal): Promise<Omit<Baseline, 'recordedAt'>> {
  const packages = parsePackageList(await io.shell('pm list packages', { signal }));
  const files = await storageEntries(io, signal);
  const wifi = (await io.shell(['settings', 'get', 'global', 'wifi_on'], { signal })).trim();
  // 1 is on, 2 on while in airplane mode (Settings.Global.WIFI_ON).
  return {
    packages,
    files,
    wifiOn: wifi === '1' || wifi === '2',
    locale: await io.getprop('persist.sys.locale', { signal }),
    accounts: await readAccounts(io, signal),
  };
}

export async function storageEntries(io: DeviceIo, signal?: AbortSignal): Promise<string[]> {
  const output = await io.shell(['find', ...STORAGE_ROOTS, '-mindepth', '1'], { signal, timeoutMs: 120_000 });
  return output
    .split('\n')
    .map((line) => line.trim().replace(/\/{2,}/g, '/'))
    .filter(
      (line) =>
        line.startsWith('/') &&
        !line.startsWith('/sdcard/Android/') &&
        !/: (Permission denied|No such file)/.test(line),
    )
    .sort();
}
