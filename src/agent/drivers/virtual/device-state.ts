/**
 * A virtual device's state on disk, which is what makes its cleaning real and checkable:
 * `apps/` (installed apps, with a recorded baseline of preinstalled ones), `storage/` (the
 * device's storage; tests see it as $DEVICE_STORAGE), `browser/` (browser data), and `boot-count`.
 *
 * Test hooks (for the end-to-end tests of failure handling; documented in docs/drivers.md):
 * a file named `fail-cleaning` in the device folder makes cleaning fail; a file named `offline`
 * makes the health check fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sessionProcesses, signalSession, startTimeOf } from './process-tree.ts';

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
    const { sid, startTime } = JSON.parse(fs.readFileSync(this.runningFile, 'utf8')) as { sid: number; startTime: number | null };
    this.clearRunning();
    // The pid may since belong to another process: only the one that started then is ours.
    if (startTime === null || startTimeOf(sid) !== startTime) return false;
    // SIGKILL takes effect when each process is next scheduled, and a shell may fork once more
    // meanwhile: signal again until the session is empty (a rare path: only after an agent crash).
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 0; attempt < 100; attempt++) {
      signalSession(sid, 'SIGKILL');
      if (sessionProcesses(sid).length === 0) break;
      Atomics.wait(pause, 0, 0, 20);
    }
    return true;
  }

  private get runningFile(): string {
    return path.join(this.root, 'running.json');
  }

  /** Removes non-baseline apps, wipes storage and browser data, "reboots"; then checks the result. */
  clean(): { ok: boolean; report: string } {
    const stopped = this.stopLeftovers();
    const removed = this.installedApps().filter((app) => !BASELINE_APPS[this.osType].includes(app));
    for (const app of removed) fs.rmSync(path.join(this.apps, app), { force: true });
    for (const dir of [this.storage, this.browser]) {
      for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
    }
    const bootFile = path.join(this.root, 'boot-count');
    const boots = Number(fs.existsSync(bootFile) ? fs.readFileSync(bootFile, 'utf8') : '0') + 1;
    fs.writeFileSync(bootFile, String(boots));
    this.ensure();
    if (this.hasHook('fail-cleaning')) return { ok: false, report: 'cleaning failed: the device did not come back after the reboot (test hook fail-cleaning)' };
    const leftovers = [
      ...this.installedApps().filter((app) => !BASELINE_APPS[this.osType].includes(app)),
      ...fs.readdirSync(this.storage),
      ...fs.readdirSync(this.browser),
    ];
    if (leftovers.length > 0) return { ok: false, report: `cleaning left ${leftovers.join(', ')} behind` };
    return { ok: true, report: `${stopped ? 'stopped tests left running by a previous agent, ' : ''}removed ${removed.length} app(s), wiped storage and browser data, rebooted (boot ${boots}), verified` };
  }
}
