/**
 * The fake go-ios for tests: a world of fake iPhones in a state file that the fake `ios` (and
 * `zsign`) executables next to this file read and change, and builders for what users upload
 * (apps, XCUITest runners, XCTest bundles) and for the service's signing folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'plist';
import { zip } from '../zips.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const FAKE_IOS = path.join(HERE, 'ios');
export const FAKE_ZSIGN = path.join(HERE, 'zsign');
export const WDA_BUNDLE = 'com.facebook.WebDriverAgentRunner.xctrunner';
/** An app the operator installed on the lab's phones: part of their baseline. */
export const LAB_TOOL = 'com.example.labtool';

export interface FakeDeviceSpec {
  readonly udid: string;
  readonly name: string;
  readonly productType: string;
  readonly productVersion: string;
}

/** The UDIDs the test profiles provision. */
export const LAB_DEVICES: readonly FakeDeviceSpec[] = [
  { udid: '00008030-001A2D3E4F5A6B7C', name: 'Lab iPhone 1', productType: 'iPhone15,4', productVersion: '17.4.1' },
  { udid: '00008101-000C0D0E0F101112', name: 'Lab iPhone 2', productType: 'iPhone14,5', productVersion: '16.7.8' },
];

export interface FakeApp {
  readonly info: Record<string, unknown>;
  readonly path: string;
  readonly xctests?: Record<string, Record<string, unknown>>;
  readonly signedBy?: string;
}

export interface FakeDevice extends FakeDeviceSpec {
  language: string;
  locale: string;
  ddiMounted: boolean;
  offlineUntil: number;
  /** Rebooted: how many more `list`s see the phone gone (see state.mjs). */
  rebootUnseen?: number;
  failReboot?: boolean;
  /** Plugged in but not trusting this host: lockdown does not answer. */
  untrusted?: boolean;
  boots?: number;
  foreground: string | null;
  wdaPort: number | null;
  /** As WDA's orientation and lock commands left them (absent: upright, unlocked). */
  orientation?:
    'PORTRAIT' | 'LANDSCAPE' | 'UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT' | 'UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN';
  locked?: boolean;
  volume?: number;
  apps: Record<string, FakeApp>;
  /** Files the apps wrote into their data containers, by bundle id. */
  containers: Record<string, string[]>;
  crashReports: Array<{ name: string; content: string }>;
}

export interface FakeState {
  usbmuxd?: boolean;
  rebootMs: number;
  devices: FakeDevice[];
}

const preinstalled = (bundleId: string, name: string): FakeApp => ({
  info: {
    CFBundleIdentifier: bundleId,
    CFBundleName: name,
    CFBundleExecutable: name.replace(/\W/g, ''),
    CFBundleShortVersionString: '1.0',
  },
  path: `/private/var/containers/Bundle/Application/PREINSTALLED/${name}.app`,
});

export class FakeIos {
  readonly stateFile: string;
  /** What the driver passes to go-ios so that the fake finds its state. */
  readonly env: Record<string, string>;

  constructor(dir: string, devices: readonly FakeDeviceSpec[] = LAB_DEVICES) {
    fs.mkdirSync(dir, { recursive: true });
    this.stateFile = path.join(dir, 'fake-ios-state.json');
    this.env = { FAKE_IOS_STATE: this.stateFile };
    const state: FakeState = {
      rebootMs: 300,
      devices: devices.map((device) => ({
        ...device,
        language: 'en',
        locale: 'en_US',
        ddiMounted: true,
        offlineUntil: 0,
        foreground: null,
        wdaPort: null,
        apps: {
          [WDA_BUNDLE]: preinstalled(WDA_BUNDLE, 'WebDriverAgentRunner-Runner'),
          [LAB_TOOL]: preinstalled(LAB_TOOL, 'Lab Tool'),
        },
        containers: { [LAB_TOOL]: ['settings.json'] },
        crashReports: [],
      })),
    };
    fs.writeFileSync(this.stateFile, JSON.stringify(state, null, 2));
  }

  state(): FakeState {
    return JSON.parse(fs.readFileSync(this.stateFile, 'utf8')) as FakeState;
  }

  device(udid: string): FakeDevice {
    return this.state().devices.find((device) => device.udid === udid)!;
  }

  /** Changes the state under the lock the fake processes take. */
  update(change: (state: FakeState) => void): void {
    const lock = `${this.stateFile}.lock`;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 0; ; attempt++) {
      try {
        fs.mkdirSync(lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2000) throw error;
        Atomics.wait(pause, 0, 0, 5);
      }
    }
    try {
      const state = this.state();
      change(state);
      fs.writeFileSync(`${this.stateFile}.part`, JSON.stringify(state, null, 2));
      fs.renameSync(`${this.stateFile}.part`, this.stateFile);
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }

  updateDevice(udid: string, change: (device: FakeDevice) => void): void {
    this.update((state) => change(state.devices.find((device) => device.udid === udid)!));
  }

  /** The command lines the fakes were called with, oldest first. */
  calls(): string[][] {
    const file = `${this.stateFile}.calls.jsonl`;
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { args: string[] }).args);
  }

  clearCalls(): void {
    fs.rmSync(`${this.stateFile}.calls.jsonl`, { force: true });
    fs.rmSync(`${this.stateFile}.wda.jsonl`, { force: true });
  }

  /** The requests the fake WebDriverAgent answered, oldest first; session ids read `{session}`. */
  wdaRequests(): Array<{ method: string; path: string; body: Record<string, unknown> }> {
    const file = `${this.stateFile}.wda.jsonl`;
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { method: string; path: string; body: Record<string, unknown> });
  }
}

export type ProfileKind = 'development' | 'ad-hoc' | 'enterprise' | 'app-store';

/**
 * A provisioning profile: a CMS envelope around an XML plist. Without Apple's keys there is no real
 * signature; the plist sits between DER-looking bytes, which is what readers that extract it see.
 */
export function provisioningProfile(
  kind: ProfileKind,
  options: { name?: string; devices?: readonly string[]; expires?: Date } = {},
): Buffer {
  const profile: Record<string, unknown> = {
    AppIDName: 'Wildcard',
    Name: options.name ?? `Test ${kind} profile`,
    UUID: `5A3E1F2B-0C4D-4E6F-8A9B-${kind.length.toString().padStart(12, '0')}`,
    TeamIdentifier: ['DEVCLOUD01'],
    ExpirationDate: options.expires ?? new Date(Date.UTC(2036, 0, 1)),
    Entitlements: { 'application-identifier': 'DEVCLOUD01.*', 'get-task-allow': kind === 'development' },
  };
  if (kind === 'development' || kind === 'ad-hoc')
    profile.ProvisionedDevices = [...(options.devices ?? LAB_DEVICES.map((device) => device.udid))];
  if (kind === 'enterprise') profile.ProvisionsAllDevices = true;
  return Buffer.concat([
    Buffer.from([0x30, 0x82, 0x1f, 0x3c, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]),
    Buffer.from(build(profile as never)),
    Buffer.from([0xa0, 0x82, 0x00, 0x00]),
  ]);
}

/** The service's signing folder; the fake signers check the identity's password. */
export function signingFolder(dir: string, options: { password?: string; profile?: Buffer } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'profile.mobileprovision'),
    options.profile ?? provisioningProfile('development', { name: 'devicecloud lab' }),
  );
  fs.writeFileSync(
    path.join(dir, 'identity.p12'),
    `fake PKCS#12 identity\n${options.password === undefined ? '' : `password=${options.password}\n`}`,
  );
  if (options.password !== undefined) fs.writeFileSync(path.join(dir, 'identity-password'), `${options.password}\n`);
  return dir;
}

const MACH_O = Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01]);

export interface AppSpec {
  readonly bundleId: string;
  readonly executable: string;
  readonly displayName?: string;
  readonly profile?: ProfileKind | 'none';
  readonly simulator?: boolean;
  /** The fake WDA's model of the app (see wda.mjs). */
  readonly screens?: readonly string[];
  readonly signIn?: boolean;
  readonly crashOnScreen?: string;
  /** XCTest bundles in PlugIns, by name, each replaying a recorded scenario. */
  readonly plugins?: Readonly<Record<string, string>>;
}

function appEntries(spec: AppSpec, root: string): Array<[string, Buffer | string, number?]> {
  const info: Record<string, unknown> = {
    CFBundleIdentifier: spec.bundleId,
    CFBundleName: spec.executable,
    CFBundleDisplayName: spec.displayName ?? spec.executable,
    CFBundleExecutable: spec.executable,
    CFBundleShortVersionString: '1.0',
    CFBundleVersion: '1',
    CFBundleSupportedPlatforms: [spec.simulator ? 'iPhoneSimulator' : 'iPhoneOS'],
    MinimumOSVersion: '15.0',
  };
  if (spec.screens) info.DCScreens = [...spec.screens];
  if (spec.signIn) info.DCSignIn = true;
  if (spec.crashOnScreen) info.DCCrashOnScreen = spec.crashOnScreen;
  const entries: Array<[string, Buffer | string, number?]> = [
    [`${root}/Info.plist`, build(info as never)],
    [`${root}/${spec.executable}`, MACH_O, 0o100755],
  ];
  const kind = spec.profile ?? 'development';
  if (kind !== 'none')
    entries.push([
      `${root}/embedded.mobileprovision`,
      provisioningProfile(kind, { name: `${spec.executable} ${kind}` }),
    ]);
  for (const [name, scenario] of Object.entries(spec.plugins ?? {}))
    entries.push(...xctestEntries(`${root}/PlugIns/${name}`, scenario));
  return entries;
}

function xctestEntries(root: string, scenario: string): Array<[string, Buffer | string, number?]> {
  const executable = path.basename(root, '.xctest');
  return [
    [
      `${root}/Info.plist`,
      build({
        CFBundleIdentifier: `com.devicecloud.tests.${executable}`,
        CFBundleExecutable: executable,
        CFBundlePackageType: 'BNDL',
        DCFakeScenario: scenario,
      } as never),
    ],
    [`${root}/${executable}`, MACH_O, 0o100755],
  ];
}

/** An .ipa: Payload/<executable>.app. */
export function ipa(spec: AppSpec): Promise<Buffer> {
  return zip(appEntries(spec, `Payload/${spec.executable}.app`));
}

/** An XCUITest runner as Xcode leaves it: the <Name>-Runner.app folder zipped, with the bundle in PlugIns. */
export function runnerZip(spec: {
  bundleId: string;
  xctest: string;
  scenario: string;
  profile?: ProfileKind | 'none';
}): Promise<Buffer> {
  const executable = `${path.basename(spec.xctest, '.xctest')}-Runner`;
  return zip(
    appEntries(
      { bundleId: spec.bundleId, executable, profile: spec.profile, plugins: { [spec.xctest]: spec.scenario } },
      `${executable}.app`,
    ),
  );
}

/** An XCTest zip: the .xctest folder at its top. */
export function xctestZip(name: string, scenario: string): Promise<Buffer> {
  return zip(xctestEntries(name, scenario));
}
