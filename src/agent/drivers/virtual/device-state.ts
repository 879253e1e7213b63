/**
 * A virtual device's state on disk, which is what makes its cleaning real and checkable:
 * `apps/` (installed apps, with a recorded baseline of preinstalled ones), `storage/` (the
 * device's storage; tests see it as $DEVICE_STORAGE), `browser/` (browser data), `boot-count`,
 * and `settings.json` (what runs changed: locale, Wi-Fi, Google account; tests see them as
 * $DEVICE_LOCALE, $DEVICE_WIFI and $DEVICE_GOOGLE_ACCOUNT).
 *
 * Test hooks (for the end-to-end tests of failure handling; documented in docs/drivers.md):
 * a file named `fail-cleaning` in the device folder makes cleaning fail; a file named `offline`
 * makes the health check fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CleaningKind, DeviceSettings } from '../../../domain/flavours.ts';
import {
  namespaceProcesses,
  sandboxNamespacesOf,
  sessionProcesses,
  signalSession,
  startTimeOf,
} from '../host/process-tree.ts';

/** A device as it comes: what cleaning puts back. */
const FACTORY_SETTINGS = { locale: 'en_US', wifi: true, googleAccount: null as string | null };
export type VirtualSettings = typeof FACTORY_SETTINGS;

const BASELINE_APPS: Readonly<Record<'ANDROID' | 'IOS', readonly string[]>> = {
  ANDROID: ['com.android.chrome', 'com.google.android.gms', 'com.android.settings'],
  IOS: ['com.apple.mobilesafari', 'com.apple.Preferences'],
};

export class DeviceState {
  readonly root: string;
  readonly apps: string;
  readonly storage: string;
  readonly browser: string;

  constructor(
    dataDir: string,
    readonly serial: string,
    private readonly osType: 'ANDROID' | 'IOS',
  ) {
    this.root = path.join(dataDir, 'devices', serial);
    this.apps = path.join(this.root, 'apps');
    this.storage = path.join(this.root, 'storage');
    this.browser = path.join(this.root, 'browser');
  }

  /** Creates the device on first use, with its preinstalled apps. */
  ensure(): void {
    for (const dir of [this.apps, this.storage, this.browser]) fs.mkdirSync(dir, { recursive: true });
    for (const app of BASELINE_APPS[this.osType]) {
      const file = path.join(this.apps, app);
      if (!fs.existsSync(file)) fs.writeFileSync(file, 'preinstalled\n');
    }
  }

  /** Installs an app under its package/bundle id; answers where it now lives. */
  install(appPath: string, id: string): string {
    const target = path.join(this.apps, id.replace(/[^A-Za-z0-9._-]/g, '_'));
    fs.copyFileSync(appPath, target);
    return target;
  }

  installedApps(): string[] {
    return fs.readdirSync(this.apps).sort();
  }

  settings(): VirtualSettings {
    return fs.existsSync(this.settingsFile)
      ? (JSON.parse(fs.readFileSync(this.settingsFile, 'utf8')) as VirtualSettings)
      : { ...FACTORY_SETTINGS };
  }

  /** The password is what a phone would use to sign in; a virtual device has nowhere to keep it. */
  applySettings(requested: DeviceSettings): VirtualSettings {
    const settings = this.settings();
    if (requested.locale !== null) settings.locale = requested.locale;
    if (requested.wifi !== null) settings.wifi = requested.wifi;
    if (requested.googleAccount !== null) settings.googleAccount = requested.googleAccount.email;
    fs.writeFileSync(this.settingsFile, JSON.stringify(settings));
    return settings;
  }

  private get settingsFile(): string {
    return path.join(this.root, 'settings.json');
  }

  hasHook(name: 'fail-cleaning' | 'offline'): boolean {
    return fs.existsSync(path.join(this.root, name));
  }

  /**
   * Remembers the session of the tests running on the device, so that an agent restarted after a
   * crash can stop what its predecessor left running (on a phone, the reboot of cleaning does it).
   */
  markRunning(sid: number): void {
    fs.writeFileSync(this.runningFile, JSON.stringify({ sid, startTime: startTimeOf(sid) ?? null }));
  }

  clearRunning(): void {
    fs.rmSync(this.runningFile, { force: true });
  }

  /** Kills tests a crashed agent left running; answers whether there were any. */
  private stopLeftovers(): boolean {
    if (!fs.existsSync(this.runningFile)) return false;
    const { sid, startTime } = JSON.parse(fs.readFileSync(this.runningFile, 'utf8')) as {
      sid: number;
      startTime: number | null;
    };
    this.clearRunning();
    // The pid may since belong to another process: only the one that started then is ours.
    if (startTime === null || startTimeOf(sid) !== startTime) return false;
    // SIGKILL takes effect when each process is next scheduled, and a shell may fork once more
    // meanwhile: signal again until the session is empty (a rare path: only after an agent crash).
    // The tests themselves run in the sandbox's PID namespace, in a session of their own: they
    // die with the session's bwrap, a moment later, and cleaning goes on only once they have.
    const sandboxes = sandboxNamespacesOf(sid);
    const living = () => [
      ...sessionProcesses(sid),
      ...[...sandboxes].flatMap((namespace) => namespaceProcesses(namespace).filter((stat) => stat.state !== 'Z')),
    ];
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 0; attempt < 250; attempt++) {
      signalSession(sid, 'SIGKILL');
      const left = living();
      if (left.length === 0) break;
      for (const { pid } of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone, or not ours to signal: the namespace ends with its PID 1 anyway
        }
      }
      Atomics.wait(pause, 0, 0, 20);
    }
    return true;
  }

  private get runningFile(): string {
    return path.join(this.root, 'running.json');
  }

  /**
   * FULL: removes non-baseline apps, wipes storage and browser data, puts settings back,
   * "reboots"; then checks the result. LIGHT (public cloud) does all but the reboot: some residue
   * may remain (docs/api.md#deployment-flavours), but never the files a stranger's run left in
   * storage.
   */
  clean(kind: CleaningKind = 'FULL'): { ok: boolean; report: string } {
    const stopped = this.stopLeftovers();
    const removed = this.installedApps().filter((app) => !BASELINE_APPS[this.osType].includes(app));
    for (const app of removed) fs.rmSync(path.join(this.apps, app), { force: true });
    const wiped = [this.storage, this.browser];
    for (const dir of wiped) {
      for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
    }
    const changedSettings = fs.existsSync(this.settingsFile);
    fs.rmSync(this.settingsFile, { force: true });
    let boots: number | null = null;
    if (kind === 'FULL') {
      const bootFile = path.join(this.root, 'boot-count');
      boots = Number(fs.existsSync(bootFile) ? fs.readFileSync(bootFile, 'utf8') : '0') + 1;
      fs.writeFileSync(bootFile, String(boots));
    }
    this.ensure();
    if (this.hasHook('fail-cleaning'))
      return { ok: false, report: 'the device did not come back after the reboot (test hook fail-cleaning)' };
    const leftovers = [
      ...this.installedApps().filter((app) => !BASELINE_APPS[this.osType].includes(app)),
      ...wiped.flatMap((dir) => fs.readdirSync(dir)),
    ];
    if (leftovers.length > 0) return { ok: false, report: `cleaning left ${leftovers.join(', ')} behind` };
    const done = [
      ...(stopped ? ['stopped tests left running by a previous agent'] : []),
      `removed ${removed.length} app(s)`,
      kind === 'FULL' ? 'wiped storage and browser data' : 'wiped storage and browser data (light cleaning: no reboot)',
      ...(changedSettings ? ['restored device settings'] : []),
      ...(boots !== null ? [`rebooted (boot ${boots})`] : []),
      'verified',
    ];
    return { ok: true, report: done.join(', ') };
  }
}
