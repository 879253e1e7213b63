/**
 * One fake phone: the state that the driver's commands change and that cleaning must put back
 * (installed packages, files, settings, per-app locales, accounts, running processes, the log
 * buffer, the screen, boot state), plus every shell command it received, so that tests can assert on what was sent.
 * Output is replayed from the recordings in ./recordings.
 */
import fs from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { PNG } from 'pngjs';
import type { Scenario } from './scenarios.ts';
import type { GoogleUser } from './ui.ts';

const RECORDINGS = path.join(path.dirname(new URL(import.meta.url).pathname), 'recordings');

export function recording(name: string, values: Readonly<Record<string, string | number>> = {}): string {
  return fs
    .readFileSync(path.join(RECORDINGS, name), 'utf8')
    .replace(/\{(\w+)\}/g, (whole, key: string) => (key in values ? String(values[key]) : whole));
}

export type DeviceModel = 'pixel7' | 'moto-g5';
export type AdbState = 'device' | 'offline' | 'unauthorized';

export interface FakeDeviceOptions {
  readonly serial: string;
  readonly model?: DeviceModel;
  readonly state?: AdbState;
  /** Whether `setprop persist.sys.*` works from the shell (userdebug builds and rooted phones). */
  readonly rooted?: boolean;
  /** How long the phone is gone from adb during a reboot, and how long it then boots. */
  readonly rebootGoneMs?: number;
  readonly bootMs?: number;
  /** Accounts signed in before the agent first sees the phone (a pool's own). */
  readonly accounts?: readonly FakeAccount[];
}

/** An account as `dumpsys account` lists it. */
export interface FakeAccount {
  readonly name: string;
  readonly type: string;
}

/** What the screen shows (see ui.ts): a recording `ui-<name>.xml`, and what the flow on it holds. */
export interface ScreenState {
  name: string;
  since: number;
  /** Typed into the sign-in pages, and the field that has focus. */
  email: string;
  password: string;
  focused: 'email' | 'password' | null;
  /** The account Settings shows (its page, the removal dialogs). */
  account: string | null;
}

export interface InstalledPackage {
  readonly system: boolean;
  readonly activities: readonly string[];
  readonly exported: readonly string[];
  readonly instrumentation: { readonly runner: string; readonly target: string } | null;
}

/** Top-level folders of a phone's shared storage, as a fresh phone has them. */
const STORAGE = [
  'Alarms',
  'Android',
  'Android/data',
  'DCIM',
  'Download',
  'Movies',
  'Music',
  'Notifications',
  'Pictures',
  'Podcasts',
  'Ringtones',
];

export class FakeDevice {
  readonly serial: string;
  readonly model: DeviceModel;
  state: AdbState;
  readonly rooted: boolean;
  readonly props = new Map<string, string>();
  readonly packages = new Map<string, InstalledPackage>();
  /** Absolute paths; a null value is a directory. */
  readonly files = new Map<string, Buffer | null>();
  /** `namespace/key`, as `settings get global wifi_on` reads it. */
  readonly settings = new Map<string, string>([
    ['global/wifi_on', '1'],
    ['system/screen_off_timeout', '60000'],
  ]);
  readonly appLocales = new Map<string, string>();
  /** Running app processes: package → pid. */
  readonly running = new Map<string, number>();
  /** The activity in front, for screenshots. */
  foreground = 'launcher';
  /** Every shell command received, in order. */
  readonly commands: string[] = [];
  /** Services listening on the phone that `adb forward` can reach, by remote spec (`tcp:6790`). */
  readonly tcpServices = new Map<string, (socket: Socket) => void>();
  /** The log buffer in `threadtime` format, and who follows it. */
  log: string[] = [];
  readonly followers = new Set<(line: string) => void>();
  /** Called when a package's processes are stopped (force-stop, reboot), to end what runs in them. */
  readonly stoppers = new Map<string, Set<() => void>>();
  readonly instrumentations = new Map<string, Scenario>();
  /** Activities that crash when started (the crawler's crash detection). */
  readonly crashingActivities = new Set<string>();
  monkeyCrashes = false;
  /** Accounts, as `dumpsys account` lists them. */
  readonly accounts: FakeAccount[];
  /** Google accounts that may sign in, beside ui.ts's GOOGLE_USERS (the fake's Google). */
  readonly googleUsers = new Map<string, GoogleUser>();
  /** Accounts Settings refuses to remove (as a device policy or the authenticator would). */
  readonly unremovableAccounts = new Set<string>();
  screen: ScreenState = { name: 'launcher', since: Date.now(), email: '', password: '', focused: null, account: null };
  /** How long Play services says "Checking info…" before its first sign-in page. */
  checkingMs = 150;
  battery = { level: 87, temperature: 291 };
  boots = 0;
  readonly rebootGoneMs: number;
  readonly bootMs: number;
  private nextPid = 12_000;

  constructor(options: FakeDeviceOptions) {
    this.serial = options.serial;
    this.model = options.model ?? 'pixel7';
    this.state = options.state ?? 'device';
    this.rooted = options.rooted ?? false;
    this.rebootGoneMs = options.rebootGoneMs ?? 150;
    this.bootMs = options.bootMs ?? 300;
    this.accounts = [...(options.accounts ?? [])];
    for (const match of recording(`getprop-${this.model}.txt`).matchAll(/^\[(.*?)\]: \[(.*?)\]$/gm))
      this.props.set(match[1]!, match[2]!);
    this.props.set('ro.serialno', this.serial);
    for (const match of recording(`pm-list-packages-${this.model}.txt`).matchAll(/^package:(\S+)$/gm)) {
      this.packages.set(match[1]!, { system: true, activities: [], exported: [], instrumentation: null });
    }
    this.files.set('/sdcard', null);
    for (const dir of STORAGE) this.files.set(`/sdcard/${dir}`, null);
    this.files.set('/sdcard/Android/data/com.android.chrome', null);
    this.files.set('/data/local/tmp', null);
    this.logLine(1204, 'I', 'ActivityManager', 'System now ready');
  }

  get apiLevel(): number {
    return Number(this.props.get('ro.build.version.sdk'));
  }

  pid(): number {
    return this.nextPid++;
  }

  start(packageName: string): number {
    const running = this.running.get(packageName);
    if (running !== undefined) return running;
    const pid = this.pid();
    this.running.set(packageName, pid);
    this.logLine(1204, 'I', 'ActivityManager', `Start proc ${pid}:${packageName}/u0a231 for activity`);
    return pid;
  }

  /** Stops a package's processes and whatever runs in them (an instrumentation, a monkey). */
  stop(packageName: string): void {
    this.running.delete(packageName);
    if (this.foreground.startsWith(`${packageName}/`)) this.foreground = 'launcher';
    for (const stopper of this.stoppers.get(packageName) ?? []) stopper();
    this.stoppers.delete(packageName);
  }

  onStop(packageName: string, stopper: () => void): () => void {
    const set = this.stoppers.get(packageName) ?? new Set();
    set.add(stopper);
    this.stoppers.set(packageName, set);
    return () => set.delete(stopper);
  }

  logLine(pid: number, level: string, tag: string, message: string, tid = pid): void {
    const now = new Date();
    const pad = (value: number, width = 2) => String(value).padStart(width, '0');
    const stamp = `${pad(now.getMonth() + 1)}-${pad(now.getDate())} ${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${pad(now.getMilliseconds(), 3)}`;
    const line = `${stamp} ${String(pid).padStart(5)} ${String(tid).padStart(5)} ${level} ${tag}: ${message}`;
    this.log.push(line);
    for (const follower of this.followers) follower(line);
  }

  /** Replays a logcat recording as new log lines (a crash, an ANR) of the given package. */
  logRecording(name: string, packageName: string, pid: number): void {
    for (const line of recording(name, { package: packageName, pid, date: 'x', time: 'x' }).split('\n')) {
      const match = /^x x\s+(\d+)\s+(\d+) (\w) (.*?): (.*)$/.exec(line);
      if (match !== null) this.logLine(Number(match[1]), match[3]!, match[4]!, match[5]!, Number(match[2]));
    }
  }

  crash(packageName: string): void {
    const pid = this.running.get(packageName) ?? this.start(packageName);
    this.logRecording('logcat-crash.txt', packageName, pid);
    this.stop(packageName);
  }

  /** Storage entries below a root, as `find ROOT -mindepth 1` lists them. */
  below(root: string): string[] {
    const prefix = `${root.replace(/\/+$/, '')}/`;
    return [...this.files.keys()].filter((file) => file.startsWith(prefix)).sort();
  }

  writeFile(file: string, content: Buffer): void {
    for (let dir = path.posix.dirname(file); dir !== '/' && !this.files.has(dir); dir = path.posix.dirname(dir))
      this.files.set(dir, null);
    this.files.set(file, content);
  }

  remove(file: string): void {
    for (const entry of [...this.files.keys()])
      if (entry === file || entry.startsWith(`${file}/`)) this.files.delete(entry);
  }

  /** A screenshot: a colour of its own for each activity in front, so screens differ. */
  screenshot(): Buffer {
    let hash = 7;
    for (const char of this.foreground) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    const png = new PNG({ width: 36, height: 64 });
    for (let at = 0; at < png.data.length; at += 4) {
      png.data[at] = hash & 0xff;
      png.data[at + 1] = (hash >> 8) & 0xff;
      png.data[at + 2] = (hash >> 16) & 0xff;
      png.data[at + 3] = 255;
    }
    return PNG.sync.write(png);
  }

  /** A reboot: every process ends, the log starts over, persisted properties stay. */
  rebooted(): void {
    for (const packageName of [...this.running.keys(), ...this.stoppers.keys()]) this.stop(packageName);
    this.foreground = 'launcher';
    this.screen = { name: 'launcher', since: Date.now(), email: '', password: '', focused: null, account: null };
    this.log = [];
    this.boots += 1;
    this.props.set('sys.boot_completed', '');
  }
}
