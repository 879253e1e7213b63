/**
 * The adb driver against a fake ADB server that speaks the wire protocol (test/support/fake-adb):
 * the conformance suite, then what is particular to phones. No phone is involved; the same
 * conformance cases run on a real one in test/hardware/adb.hw.test.ts.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { Adb } from '../../src/agent/drivers/adb/adbkit.ts';
import { baselinePath } from '../../src/agent/drivers/adb/baseline.ts';
import { parseAccounts } from '../../src/agent/drivers/adb/device-output.ts';
import { noSandbox } from '../../src/agent/drivers/host/sandbox.ts';
import { processesWith, testSandbox } from '../support/sandbox.ts';
import { type AdbDriverOptions, createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { fixedTexts, inputTextArgument, parseUiDump, screenTitle } from '../../src/agent/drivers/adb/ui-automator.ts';
import { testApk, localFile } from '../support/fake-adb/apks.ts';
import { FakeAdbServer, FakeDevice, GOOGLE_USERS, recording } from '../support/fake-adb/index.ts';
import { dumpScreen, startActivity, tap, typeText } from '../support/fake-adb/ui.ts';
import { zip } from '../support/zips.ts';
import { type DriverFixtures, type JobSpec, describeDriverConformance, recorder } from './conformance.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-adb-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let app: LocalFile;
const apks = new Map<string, LocalFile>();

beforeAll(async () => {
  const examples = await buildExamples(path.join(root, 'examples'));
  app = await localFile(examples['sample-app.apk']!);
  for (const name of ['sample', 'failing', 'crash', 'endless', 'trace', 'check']) apks.set(name, await testApk(root, `com.devicecloud.${name}.test`));
});

const instrumentation = (name: string): JobSpec => ({ kind: 'instrumentation', app, tests: apks.get(name)! });

const fixtures: DriverFixtures = {
  passing: async () => instrumentation('sample'),
  failing: async () => instrumentation('failing'),
  endless: async () => instrumentation('endless'),
  leavesTrace: async () => instrumentation('trace'),
  expectsClean: async () => instrumentation('check'),
  unsupportedKind: 'xctest',
};

function driverFor(fake: FakeAdbServer, dataDir: string, extra: Partial<AdbDriverOptions> = {}, logs: string[] = []): Driver {
  return createAdbDriver({
    dataDir,
    server: { host: '127.0.0.1', port: fake.port },
    log: (message) => logs.push(message),
    bootTimeoutMs: 10_000,
    crawler: { settleMs: 100, monkeyEvents: 40, monkeyThrottleMs: 10 },
    ui: { pollMs: 20, screenTimeoutMs: 1500, flowTimeoutMs: 20_000 },
    // The fake ADB server listens on the host's loopback: the network of private clouds.
    sandbox: testSandbox(dataDir, { network: 'host' }),
    ...extra,
  });
}

describeDriverConformance('adb (fake ADB server)', async () => {
  const fake = await FakeAdbServer.start([{ serial: '28141FDH2000JY' }]);
  return { driver: driverFor(fake, fs.mkdtempSync(path.join(root, 'conformance-'))), fixtures, cleanup: () => fake.close() };
});

describe('adb driver', () => {
  let fake: FakeAdbServer;
  let driver: Driver;
  let dataDir: string;
  const logs: string[] = [];
  let jobs = 0;
  const PIXEL = '28141FDH2000JY';
  const MOTO = 'ZY2242CQ7N';
  /** The pool's own account, signed in by hand before the agent first saw the phone. */
  const LAB_ACCOUNT = { name: 'lab.pixel7@gmail.com', type: 'com.google' };

  beforeAll(async () => {
    fake = await FakeAdbServer.start([{ serial: PIXEL, accounts: [LAB_ACCOUNT] }, { serial: MOTO, model: 'moto-g5' }]);
    dataDir = fs.mkdtempSync(path.join(root, 'driver-'));
    driver = driverFor(fake, dataDir, {}, logs);
  });
  afterAll(async () => {
    await driver.close();
    await fake.close();
  });

  const job = (spec: JobSpec & Partial<Job>): Job => {
    jobs += 1;
    const workDir = path.join(dataDir, 'work', String(jobs));
    fs.mkdirSync(workDir, { recursive: true });
    return { deviceRunId: jobs, serial: PIXEL, data: [], parameters: {}, timeoutSeconds: 60, locale: 'en_US', deviceSettings: null, launchApp: true, credentials: null, workDir, ...spec };
  };
  const until = async (check: () => boolean | Promise<boolean>, ms = 5000) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) if (await check()) return;
    throw new Error('condition not met in time');
  };

  it('describes each phone from its properties and records its baseline on first sight', async () => {
    const devices = await driver.listDevices();
    expect(devices.map((device) => [device.serial, device.displayName, device.manufacturer, device.releaseVersion, device.apiLevel])).toEqual([
      [PIXEL, 'Google Pixel 7', 'Google', '14', 34],
      [MOTO, 'Motorola Moto G (5)', 'Motorola', '7.0', 24],
    ]);
    expect(devices[0]!.executionKinds).toEqual(['instrumentation', 'uiautomator', 'server-side', 'calabash', 'crawler']);
    const baseline = JSON.parse(fs.readFileSync(baselinePath(dataDir, PIXEL), 'utf8'));
    expect(baseline).toMatchObject({ wifiOn: true, locale: 'en-US', accounts: [LAB_ACCOUNT] });
    expect(baseline.packages).toContain('com.android.chrome');
    expect(baseline.files).toContain('/sdcard/Download');
    expect(fake.requests).toContain('host:track-devices');
  });

  it('follows phones coming and going, and says why one cannot be used', async () => {
    fake.plug({ serial: 'NEWPHONE1' });
    await until(async () => (await driver.listDevices()).some((device) => device.serial === 'NEWPHONE1'));
    expect(await driver.health('NEWPHONE1')).toEqual({ ok: true });
    fake.setState('NEWPHONE1', 'unauthorized');
    await until(async () => !(await driver.health('NEWPHONE1')).ok);
    expect(await driver.health('NEWPHONE1')).toEqual({ ok: false, reason: expect.stringContaining('USB debugging is not authorized') });
    expect((await driver.listDevices()).map((device) => device.serial)).not.toContain('NEWPHONE1');
    fake.setState('NEWPHONE1', 'offline');
    await until(async () => ((await driver.health('NEWPHONE1')) as { reason?: string }).reason?.includes('offline') ?? false);
    fake.unplug('NEWPHONE1');
    await until(async () => ((await driver.health('NEWPHONE1')) as { reason?: string }).reason?.includes('not connected') ?? false);
    expect(await driver.clean('NEWPHONE1')).toEqual({ ok: false, report: 'cannot clean: the phone is not connected to this host' });
    expect(await driver.execute(job({ ...instrumentation('sample'), serial: 'NEWPHONE1' }), recorder().context)).toMatchObject({ outcome: 'INFRA_ERROR', failReason: 'the phone is not connected to this host' });
    expect(logs).toContain('NEWPHONE1: disconnected');
  });

  it('reports a low or hot battery, and a phone still booting, as unhealthy', async () => {
    const pixel = fake.device(PIXEL);
    pixel.battery = { level: 9, temperature: 300 };
    expect(await driver.health(PIXEL)).toEqual({ ok: false, reason: 'the battery is at 9% (is the hub port charging it?)' });
    pixel.battery = { level: 80, temperature: 472 };
    expect(await driver.health(PIXEL)).toEqual({ ok: false, reason: 'the battery is at 47.2 °C: let the phone cool down' });
    pixel.battery = { level: 87, temperature: 291 };
    pixel.props.set('sys.boot_completed', '');
    expect(await driver.health(PIXEL)).toEqual({ ok: false, reason: 'the phone is still booting' });
    pixel.props.set('sys.boot_completed', '1');
    expect(await driver.health(PIXEL)).toEqual({ ok: true });
  });

  it('runs instrumentation end to end: installs, passes parameters, reads failures, screenshots them, captures logcat', async () => {
    const pixel = fake.device(PIXEL);
    const { context, steps } = recorder();
    const result = await driver.execute(job({ ...instrumentation('failing'), parameters: { size: 'medium', 'not an argument': 'x' } }), context);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => `${testCase.methodName}:${testCase.result}`)).toEqual([
      'testValidLogin:PASSED', 'testAddToCart:PASSED', 'testPayWithExpiredCard:FAILED', 'testPayWithNfc:SKIPPED', 'testPayLater:SKIPPED',
    ]);
    expect(steps).toEqual(['PREPARING', 'INSTALL', 'RUNNING']);
    expect(pixel.commands).toContain("'am' 'instrument' '-r' '-w' '-e' 'size' 'medium' 'com.devicecloud.failing.test/androidx.test.runner.AndroidJUnitRunner'");
    expect(pixel.commands.filter((command) => command.startsWith("'pm' 'install' '-r' '-t' '-g' '/data/local/tmp/"))).toHaveLength(2);
    const shots = result.artifacts.filter((artifact) => artifact.kind === 'screenshot');
    expect(shots.map((shot) => shot.name)).toEqual(['01-failed-testPayWithExpiredCard.png', '02-final.png']);
    expect(PNG.sync.read(fs.readFileSync(shots[0]!.path)).width).toBe(36);
    const logcat = result.artifacts.find((artifact) => artifact.name === 'logcat.txt')!;
    expect(fs.readFileSync(logcat.path, 'utf8')).toContain('Start proc');
    expect(pixel.running.has('com.devicecloud.sample')).toBe(false);
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('fails the test an app crash took down, with the stack trace from logcat', async () => {
    const result = await driver.execute(job(instrumentation('crash')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    const crashed = result.testCases!.find((testCase) => testCase.result === 'FAILED')!;
    expect(crashed).toMatchObject({ methodName: 'testOpenReceipt', errorMessage: 'the app crashed: java.lang.IllegalStateException: receipt must not be null' });
    expect(crashed.stacktrace).toContain('at com.devicecloud.sample.ReceiptActivity.onCreate(ReceiptActivity.java:42)');
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('refuses an app the phone will not install as a failed run, and a missing runner likewise', async () => {
    const broken = path.join(root, 'broken.apk');
    fs.writeFileSync(broken, 'not a zip');
    const refused = await driver.execute(job({ kind: 'instrumentation', app: { path: broken, name: 'broken.apk', properties: { package_name: 'x' } }, tests: apks.get('sample')! }), recorder().context);
    expect(refused).toMatchObject({ outcome: 'COMPLETED', testCases: [], failReason: expect.stringMatching(/^broken\.apk could not be installed: Failure \[INSTALL_PARSE_FAILED_NOT_APK/) });
    const unknown = await testApk(root, 'com.devicecloud.unknown.test');
    const noRunner = await driver.execute(job({ kind: 'instrumentation', app, tests: unknown }), recorder().context);
    expect(noRunner).toMatchObject({ outcome: 'COMPLETED', testCases: [], failReason: expect.stringContaining('Unable to find instrumentation info') });
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('samples the app\'s CPU and memory every second, on toybox and toolbox top alike', async () => {
    for (const serial of [PIXEL, MOTO]) {
      const { context, samples } = recorder();
      const result = await driver.execute(job({ ...instrumentation('sample'), serial }), context);
      expect(result.outcome).toBe('COMPLETED');
      expect(samples.length).toBeGreaterThanOrEqual(1);
      // 25% of one of eight cores on the Pixel; 6% of the whole phone on the Moto.
      expect(samples[0]).toMatchObject({ cpuUsage: serial === PIXEL ? 0.031 : 0.06, packageName: 'com.devicecloud.sample', memUsage: expect.any(Number) });
      expect(samples[0]!.memUsage).toBeGreaterThan(40_000);
      expect((await driver.clean(serial)).ok).toBe(true);
    }
    expect(fake.device(MOTO).commands).toContain("'top' '-n' '1'");
    expect(fake.device(PIXEL).commands.some((command) => command.startsWith("'top' '-b' '-n' '1' '-p'"))).toBe(true);
  });

  it('applies device settings before the tests and cleaning puts them back', async () => {
    const pixel = fake.device(PIXEL);
    let seen: unknown = null;
    pixel.instrumentations.set('com.devicecloud.sample.test', {
      output: (device) => {
        seen = { wifi: device.settings.get('global/wifi_on'), app: device.appLocales.get('com.devicecloud.sample'), tests: device.appLocales.get('com.devicecloud.sample.test') };
        return recording('instrument-passing.txt');
      },
      durationMs: 200,
    });
    try {
      const result = await driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: 'fi_FI', wifi: false, googleAccount: null } }), recorder().context);
      expect(result.outcome).toBe('COMPLETED');
      expect(seen).toEqual({ wifi: '0', app: 'fi-FI', tests: 'fi-FI' });
    } finally {
      pixel.instrumentations.delete('com.devicecloud.sample.test');
    }
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toContain('turned Wi-Fi on');
    expect(pixel.settings.get('global/wifi_on')).toBe('1');
    expect(pixel.appLocales.size).toBe(0);
  });

  it('says plainly which settings it cannot apply, before touching the phone', async () => {
    const motoCommands = fake.device(MOTO).commands.length;
    const account = await driver.execute(job({ ...instrumentation('sample'), serial: MOTO, deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa@example.com', password: 'x' } } }), recorder().context);
    expect(account).toMatchObject({ outcome: 'REFUSED', failReason: 'the device settings could not be applied: signing in a Google account is automated from Android 8 (API 26); this phone runs API 24' });
    expect(fake.device(MOTO).commands.slice(motoCommands).some((command) => command.includes('ADD_ACCOUNT_SETTINGS'))).toBe(false);
    const untypable = await driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa@example.com', password: 'pässwörd' } } }), recorder().context);
    expect(untypable).toMatchObject({ outcome: 'REFUSED', failReason: 'the device settings could not be applied: the password holds characters that `input text` cannot type (only printable ASCII, and not "%s")' });
    const old = await driver.execute(job({ ...instrumentation('sample'), serial: MOTO, deviceSettings: { locale: 'de_DE', wifi: null, googleAccount: null } }), recorder().context);
    expect(old).toMatchObject({ outcome: 'REFUSED', failReason: expect.stringContaining('below Android 13 the locale can only be set as the system locale, which needs a rooted phone') });
    expect([...fake.device(MOTO).packages.keys()]).not.toContain('com.devicecloud.sample');
  });

  it('sets the system locale on a rooted pre-13 phone with a reboot, and cleaning sets it back', async () => {
    fake.plug({ serial: 'ROOTEDMOTO', model: 'moto-g5', rooted: true });
    await until(async () => (await driver.listDevices()).some((device) => device.serial === 'ROOTEDMOTO'));
    const rooted = fake.device('ROOTEDMOTO');
    expect((await driver.clean('ROOTEDMOTO')).ok).toBe(true);
    const boots = rooted.boots;
    const result = await driver.execute(job({ ...instrumentation('sample'), serial: 'ROOTEDMOTO', deviceSettings: { locale: 'de_DE', wifi: null, googleAccount: null } }), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    expect(rooted.boots).toBe(boots + 1);
    expect(rooted.props.get('persist.sys.locale')).toBe('de-DE');
    const cleaned = await driver.clean('ROOTEDMOTO');
    expect(cleaned.report).toContain('set the locale back to en-GB');
    expect(rooted.props.get('persist.sys.locale')).toBe('en-GB');
    fake.unplug('ROOTEDMOTO');
  });

  /** Everything the driver wrote or said: its log, the results and reports given, and every file under its data dir (baselines, artifacts). */
  function expectNowhere(secret: string, said: readonly unknown[]) {
    const files = (fs.readdirSync(dataDir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(0);
    for (const form of [secret, secret.replaceAll(' ', '%s')]) {
      expect(logs.filter((line) => line.includes(form))).toEqual([]);
      expect(said.map((each) => JSON.stringify(each)).filter((text) => text.includes(JSON.stringify(form).slice(1, -1)) || text.includes(form))).toEqual([]);
      expect(files.filter((file) => fs.readFileSync(file, 'latin1').includes(form))).toEqual([]);
    }
  }
  /** How a word reaches the phone's shell: adbkit single-quotes it. */
  const quoted = (word: string) => `'${word.replaceAll("'", `'"'"'`)}'`;

  it('signs a Google account in through the add-account screens, and cleaning removes it through Settings and keeps the baseline\'s', async () => {
    const pixel = fake.device(PIXEL);
    const email = 'qa.devicecloud@gmail.com';
    const password = GOOGLE_USERS[email]!.password;
    let during: string[] = [];
    pixel.instrumentations.set('com.devicecloud.sample.test', {
      output: (device) => {
        during = device.accounts.map((account) => `${account.name} (${account.type})`);
        return recording('instrument-passing.txt');
      },
      durationMs: 200,
    });
    const from = pixel.commands.length;
    const logsFrom = logs.length;
    let result;
    try {
      result = await driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: null, wifi: false, googleAccount: { email, password } } }), recorder().context);
    } finally {
      pixel.instrumentations.delete('com.devicecloud.sample.test');
    }
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    expect(during).toEqual([`${LAB_ACCOUNT.name} (com.google)`, `${email} (com.google)`]);
    const sent = pixel.commands.slice(from);
    const opened = sent.indexOf("'am' 'start' '-a' 'android.settings.ADD_ACCOUNT_SETTINGS' '--esa' 'account_types' 'com.google'");
    // Signed in first: it needs the network that the run then turns off, and nothing is installed yet.
    expect(opened).toBeGreaterThan(-1);
    expect(opened).toBeLessThan(sent.indexOf("'svc' 'wifi' 'disable'"));
    expect(opened).toBeLessThan(sent.findIndex((command) => command.startsWith("'pm' 'install'")));
    // Typed with `input text`: spaces as %s, the rest quoted for the shell and arriving as it is.
    expect(sent).toContain(`'input' 'text' ${quoted(email)}`);
    expect(sent).toContain(`'input' 'text' ${quoted(password.replaceAll(' ', '%s'))}`);
    expect(sent.filter((command) => command === "'input' 'keyevent' 'KEYCODE_ENTER'")).toHaveLength(2);
    expect(sent.filter((command) => command.startsWith('uiautomator dump /data/local/tmp/'))).not.toHaveLength(0);
    expect(pixel.below('/data/local/tmp')).toEqual([]);
    expect(logs.slice(logsFrom).filter((line) => line.includes('Google sign-in')).map((line) => line.replace(`${PIXEL}: the Google sign-in of ${email}: `, ''))).toEqual([
      '"Sign in": typed the e-mail address, pressed Enter',
      '"Welcome": typed the password, pressed Enter',
      '"Add phone number?": tapped "Skip"',
      '"Privacy and Terms": tapped "I agree"',
      '"Google services": tapped "More"',
      '"Back up to Google Drive": tapped "Accept"',
      'signed in (dumpsys account lists it)',
    ]);

    const cleanedFrom = pixel.commands.length;
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toContain(`removed the Google account(s) ${email}, rebooted`);
    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
    expect(pixel.commands.slice(cleanedFrom)).toContain("'am' 'start' '-a' 'android.settings.SYNC_SETTINGS'");
    expect(logs.slice(logsFrom).filter((line) => line.includes('removing the Google account')).map((line) => line.replace(`${PIXEL}: removing the Google account ${email}: `, ''))).toEqual([
      '"Passwords, passkeys & accounts": opened the account',
      `"${email}": tapped "Remove account"`,
      '"Remove account?": confirmed "Remove account"',
      'removed (dumpsys account no longer lists it)',
    ]);
    expectNowhere(password, [result, cleaned]);
  });

  it('ends a run whose sign-in Google refuses as REFUSED naming the screen (a wrong password, a second factor, an unknown account); a page it does not know is the phone\'s failure', async () => {
    const pixel = fake.device(PIXEL);
    const attempt = async (email: string, password: string) => driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: null, wifi: null, googleAccount: { email, password } } }), recorder().context);
    const prefix = 'the device settings could not be applied: the Google sign-in of';

    const wrong = await attempt('qa.devicecloud@gmail.com', 'not the password');
    expect(wrong).toMatchObject({ outcome: 'REFUSED', failReason: `${prefix} qa.devicecloud@gmail.com stopped at "Wrong password. Try again or click Forgot password to reset it.": the password is wrong` });
    const twoStep = await attempt('qa.2sv.devicecloud@gmail.com', GOOGLE_USERS['qa.2sv.devicecloud@gmail.com']!.password);
    expect(twoStep).toMatchObject({ outcome: 'REFUSED', failReason: `${prefix} qa.2sv.devicecloud@gmail.com stopped at "2-Step Verification": the account asks for a second factor (2-Step Verification); use an account without it on test devices` });
    const unknown = await attempt('nobody.devicecloud@gmail.com', 'whatever it is');
    expect(unknown).toMatchObject({ outcome: 'REFUSED', failReason: `${prefix} nobody.devicecloud@gmail.com stopped at "Couldn’t find your Google Account": Google knows no such account` });
    const started = Date.now();
    const page = await attempt('qa.recovery.devicecloud@gmail.com', GOOGLE_USERS['qa.recovery.devicecloud@gmail.com']!.password);
    expect(page).toMatchObject({ outcome: 'INFRA_ERROR', failReason: 'preparing the phone failed: the Google sign-in of qa.recovery.devicecloud@gmail.com stopped: a page it does not know: "Protect your account"' });
    // The screen's own deadline (1.5 s here), not the flow's.
    expect(Date.now() - started).toBeLessThan(5000);

    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
    expect([...pixel.packages.keys()]).not.toContain('com.devicecloud.sample');
    expect(pixel.screen.name).toBe('google-protect');
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(pixel.screen.name).toBe('launcher');
    expectNowhere('not the password', [wrong]);
    for (const user of Object.values(GOOGLE_USERS)) expectNowhere(user.password, [wrong, twoStep, unknown, page, cleaned]);
  });

  it('stops signing in at once when the run is stopped', async () => {
    const pixel = fake.device(PIXEL);
    pixel.checkingMs = 60_000;
    try {
      const controller = new AbortController();
      const running = driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa.devicecloud@gmail.com', password: GOOGLE_USERS['qa.devicecloud@gmail.com']!.password } } }), recorder(controller.signal).context);
      await until(() => pixel.screen.name === 'google-checking');
      const stopped = Date.now();
      controller.abort();
      expect(await running).toMatchObject({ outcome: 'STOPPED' });
      expect(Date.now() - stopped).toBeLessThan(1000);
    } finally {
      pixel.checkingMs = 150;
    }
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('fails cleaning when Settings refuses to remove an account, and cleans once it can', async () => {
    const pixel = fake.device(PIXEL);
    // Signed in by the tests themselves, on a phone whose policy keeps accounts.
    pixel.accounts.push({ name: 'left.behind@gmail.com', type: 'com.google' });
    pixel.unremovableAccounts.add('left.behind@gmail.com');
    try {
      const stuck = await driver.clean(PIXEL);
      expect(stuck.ok).toBe(false);
      expect(stuck.report).toContain('removing the Google account left.behind@gmail.com: Settings refused ("This change isn\'t allowed by your admin")');
      expect(stuck.report).toContain('Google account(s) still signed in: left.behind@gmail.com');
      expect(pixel.screen.name).toBe('launcher');
    } finally {
      pixel.unremovableAccounts.clear();
    }
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
  });

  it('completes a baseline recorded before accounts were, with the accounts the phone has', async () => {
    const file = baselinePath(dataDir, PIXEL);
    const { accounts: _accounts, ...older } = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify(older));
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).accounts).toEqual([LAB_ACCOUNT]);
    expect(logs).toContain(`${PIXEL}: baseline completed with the phone's 1 account(s)`);
  });

  it('cleans: uninstalls what is new, clears the browser, deletes files, reboots, waits for boot, verifies', async () => {
    const pixel = fake.device(PIXEL);
    await driver.execute(job(instrumentation('trace')), recorder().context);
    expect(pixel.below('/sdcard/Download')).toContain('/sdcard/Download/left-behind.txt');
    const boots = pixel.boots;
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toMatch(/^uninstalled 2 package\(s\) \(com\.devicecloud\.sample, com\.devicecloud\.trace\.test\), cleared com\.android\.chrome, deleted 2 file\(s\) and folder\(s\) left in storage, turned Wi-Fi on, rebooted; verified against the baseline of /);
    expect(pixel.boots).toBe(boots + 1);
    expect(pixel.commands).toContain("'pm' 'clear' 'com.android.chrome'");
    expect(pixel.below('/sdcard/Download')).toEqual([]);
    expect(pixel.below('/data/local/tmp')).toEqual([]);
  });

  it('cleans LIGHT on the public cloud: packages, browsers, settings and the files a run left, but no reboot', async () => {
    const pixel = fake.device(PIXEL);
    await driver.execute(job(instrumentation('trace')), recorder().context);
    // The tests signed an account in themselves: not a setting of the run's, but not the phone's either.
    pixel.accounts.push({ name: 'tests.own@gmail.com', type: 'com.google' });
    const boots = pixel.boots;
    const light = await driver.clean(PIXEL, 'LIGHT');
    expect(light.ok, light.report).toBe(true);
    expect(light.report).toContain('light cleaning: no reboot');
    expect(light.report).toContain('removed the Google account(s) tests.own@gmail.com');
    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
    expect(pixel.boots).toBe(boots);
    expect([...pixel.packages.keys()].filter((name) => name.startsWith('com.devicecloud'))).toEqual([]);
    expect(pixel.settings.get('global/wifi_on')).toBe('1');
    // The next run may be a stranger's: nothing the last one wrote to storage is left for it.
    expect(pixel.below('/sdcard/Download')).toEqual([]);
    expect(light.report).toMatch(/deleted [1-9]\d* file\(s\) and folder\(s\) left in storage/);
  });

  it('fails cleaning when something cannot be put back, and when the phone does not come back from the reboot', async () => {
    const pixel = fake.device(PIXEL);
    // A device-admin app, say: it refuses to be uninstalled.
    pixel.packages.set('com.example.admin', { system: true, activities: [], exported: [], instrumentation: null });
    const stuck = await driver.clean(PIXEL);
    expect(stuck.ok).toBe(false);
    expect(stuck.report).toContain('com.example.admin could not be uninstalled');
    expect(stuck.report).toContain('still installed: com.example.admin');
    pixel.packages.delete('com.example.admin');

    const slow = await FakeAdbServer.start([{ serial: 'SLOWBOOT', bootMs: 5000 }]);
    const impatient = driverFor(slow, fs.mkdtempSync(path.join(root, 'slow-')), { bootTimeoutMs: 1500 });
    try {
      await impatient.listDevices();
      const report = await impatient.clean('SLOWBOOT');
      expect(report).toMatchObject({ ok: false, report: expect.stringContaining('the phone did not finish booting within 2 s (sys.boot_completed never became 1)') });
    } finally {
      await impatient.close();
      await slow.close();
    }
  });

  it('keeps the baseline across agent restarts', async () => {
    const pixel = fake.device(PIXEL);
    await driver.execute(job(instrumentation('sample')), recorder().context);
    const successor = driverFor(fake, dataDir);
    try {
      await successor.listDevices();
      const cleaned = await successor.clean(PIXEL);
      expect(cleaned.ok, cleaned.report).toBe(true);
      expect(cleaned.report).toContain('uninstalled 2 package(s)');
      expect([...pixel.packages.keys()].filter((name) => name.startsWith('com.devicecloud'))).toEqual([]);
    } finally {
      await successor.close();
    }
  });

  it('runs server-side packages with the phone\'s serial and its ADB endpoint in the environment', async () => {
    // The script speaks the ADB protocol itself (bash's /dev/tcp), as adb or Appium would.
    const script = `set -e
exec 3<>/dev/tcp/$ANDROID_ADB_SERVER_ADDRESS/$ANDROID_ADB_SERVER_PORT
req() { printf '%04x%s' "\${#1}" "$1" >&3; }
req "host:transport:$ANDROID_SERIAL"; head -c 4 <&3 > /dev/null
req "shell:getprop ro.product.model"; head -c 4 <&3 > /dev/null
model=$(cat <&3 | tr -d '\\n')
env | sort > "$OUTPUT_DIR/env.txt"
cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="s"><testcase classname="c" name="model $model"/></testsuite>
XML
`;
    const tests = path.join(root, 'server-side.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    process.env.DEVICECLOUD_AGENT_TOKEN = 'dca_never_leaks_0000';
    let result;
    try {
      result = await driver.execute(job({ kind: 'server-side', app, tests: { path: tests, name: 'server-side.zip', properties: {} }, parameters: { BASE_URL: 'https://staging', ANDROID_SERIAL: 'other' } }), recorder().context);
    } finally {
      delete process.env.DEVICECLOUD_AGENT_TOKEN;
    }
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    expect(result.exitCode).toBe(0);
    const junit = fs.readFileSync(result.artifacts.find((artifact) => artifact.kind === 'junit')!.path, 'utf8');
    expect(junit).toContain('name="model Pixel 7"');
    const env = fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'env.txt')!.path, 'utf8');
    for (const line of [`ANDROID_SERIAL=${PIXEL}`, `ADB_SERVER_SOCKET=localfilesystem:${path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock')}`, 'ANDROID_ADB_SERVER_ADDRESS=127.0.0.1', 'APP_PACKAGE=com.devicecloud.sample', 'APP_ACTIVITY=com.devicecloud.sample.MainActivity', 'DEVICE_API_LEVEL=34', 'BASE_URL=https://staging']) expect(env).toContain(line);
    // The host's ADB server, which reaches every phone, is named nowhere: only the run's endpoint is.
    expect(env).not.toContain(String(fake.port));
    expect(env).not.toContain('ANDROID_SERIAL=other');
    expect(env).not.toContain('dca_never_leaks');
    expect(result.artifacts.map((artifact) => artifact.name)).toEqual(expect.arrayContaining(['test.log', 'logcat.txt', '01-final.png']));
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('gives a server-side script its own phone only: the other phone, the server\'s stop and garbage are refused, its own phone still answers', async () => {
    // The script plays the attacker through its endpoint's port (bash's /dev/tcp) and, where the
    // host has adb, through ADB_SERVER_SOCKET as the adb command line finds it.
    const script = `
ask() { exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf '%04x%s' "\${#1}" "$1" >&3; cat <&3; exec 3<&-; }
{ ask host:devices; echo; ask "host:transport:$OTHER"; echo; ask host:kill; echo; } > "$OUTPUT_DIR/wire.txt"
exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf 'zz%%garbage' >&3; head -c 1 <&3 > /dev/null; exec 3<&-
if command -v adb > /dev/null; then
  { adb devices; adb -s "$OTHER" shell getprop ro.product.model 2>&1; adb shell getprop ro.product.model; adb kill-server; adb -s "$ANDROID_SERIAL" get-state; } > "$OUTPUT_DIR/adb.txt" 2>&1
fi
`;
    const tests = path.join(root, 'one-device.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    const moto = fake.device(MOTO).commands.length;
    const result = await driver.execute(job({ kind: 'server-side', app, tests: { path: tests, name: 'one-device.zip', properties: {} }, parameters: { OTHER: MOTO } }), recorder().context);
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    const output = (name: string) => fs.readFileSync(result.artifacts.find((artifact) => artifact.name === name)!.path, 'utf8');
    const hex = (text: string) => `${text.length.toString(16).padStart(4, '0')}${text}`;
    const refused = `device '${MOTO}' is not this run's device: this ADB endpoint serves ${PIXEL} only`;
    expect(output('wire.txt')).toBe(`OKAY${hex(`${PIXEL}\tdevice\n`)}\nFAIL${hex(refused)}\nFAIL${hex('the ADB server is shared by every phone on this host: a run may not stop it')}\n`);
    if (fs.existsSync('/usr/bin/adb')) {
      expect(output('adb.txt')).toBe(`List of devices attached\n${PIXEL}\tdevice\n\nerror: ${refused}\nPixel 7\ndevice\n`);
    }
    expect(fake.device(MOTO).commands).toHaveLength(moto);
    expect(fake.killed).toBe(false);
    // The endpoint went with the run.
    expect(fs.existsSync(path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock'))).toBe(false);
    expect((await driver.health(PIXEL)).ok).toBe(true);
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it("gives a script on the public flavour (sandbox without network) no path to the host's loopback, and its own phone through the run's socket and its relay", async () => {
    // Inside: the endpoint over TCP as Appium and adbkit reach it (the relay's 127.0.0.1:$ANDROID_ADB_SERVER_PORT),
    // the host's ADB server and another service of the host's loopback, adb through the socket, then a forward to
    // the phone's UiAutomator2 server, reached on the sandbox's own loopback.
    const script = `ask() { exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf '%04x%s' "\${#1}" "$1" >&3; cat <&3; exec 3<&-; }
{ ask host:devices; echo; ask "host:transport:$OTHER"; echo; } > "$OUTPUT_DIR/wire.txt"
for port in $HOST_ADB $HOST_OTHER; do (exec 3<>/dev/tcp/127.0.0.1/$port && echo "REACHED $port"); done > "$OUTPUT_DIR/host.txt" 2>&1
echo "socket $ADB_SERVER_SOCKET"
if command -v adb > /dev/null; then
  { adb devices; adb -P "$ANDROID_ADB_SERVER_PORT" -s "$OTHER" get-state; adb -P "$ANDROID_ADB_SERVER_PORT" forward tcp:8200 tcp:6790; adb forward --list; } > "$OUTPUT_DIR/adb.txt" 2>&1
else
  ask 'host:forward:tcp:8200;tcp:6790' > "$OUTPUT_DIR/adb.txt"
fi
exec 4<>/dev/tcp/127.0.0.1/8200 && printf 'GET /status' >&4 && cat <&4 > "$OUTPUT_DIR/service.txt"
adb_remove() { if command -v adb > /dev/null; then adb forward --remove tcp:8200; else ask 'host:killforward:tcp:8200' > /dev/null; fi; }
adb_remove && (exec 5<>/dev/tcp/127.0.0.1/8200 && echo "STILL FORWARDED") > "$OUTPUT_DIR/removed.txt" 2>&1
for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done | grep -v '^[^ ]*bwrap ' | grep -c '[s]andbox-relay' > "$OUTPUT_DIR/relay.txt"
exit 3
`;
    const tests = path.join(root, 'public-adb.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    const publicDir = fs.mkdtempSync(path.join(root, 'public-'));
    // A small memory limit: its per-process backstop (4 × 128 MiB of address space) is the script's, not the relay's (Node needs more).
    const isolated = driverFor(fake, publicDir, { sandbox: testSandbox(publicDir, { network: 'none', limits: { memoryMb: 128 } }) });
    // A service of the host's own (its database, say), on the loopback.
    const hostService = net.createServer((socket) => socket.end('host secret'));
    await new Promise<void>((resolve) => hostService.listen(0, '127.0.0.1', resolve));
    fake.device(PIXEL).tcpServices.set('tcp:6790', (socket) => socket.once('data', (request) => socket.end(`uiautomator2 of Pixel answers ${request}`)));
    const requests = fake.requests.length;
    try {
      await isolated.listDevices();
      const result = await isolated.execute(
        job({ kind: 'server-side', app, tests: { path: tests, name: 'public-adb.zip', properties: {} }, parameters: { OTHER: MOTO, HOST_ADB: String(fake.port), HOST_OTHER: String((hostService.address() as net.AddressInfo).port) } }),
        recorder().context,
      );
      const output = (name: string) => fs.readFileSync(result.artifacts.find((artifact) => artifact.name === name)!.path, 'utf8');
      const hex = (text: string) => `${text.length.toString(16).padStart(4, '0')}${text}`;
      const refused = `device '${MOTO}' is not this run's device: this ADB endpoint serves ${PIXEL} only`;
      // The relay ran the script, inside its PID namespace, and handed back its exit code.
      expect(output('relay.txt')).toBe('1\n');
      expect(result.exitCode).toBe(3);
      expect(output('test.log')).toMatch(/socket localfilesystem:\/.*\/box\/adb\.sock/);
      // (a) the endpoint over TCP, inside: its own phone, the other refused.
      expect(output('wire.txt')).toBe(`OKAY${hex(`${PIXEL}\tdevice\n`)}\nFAIL${hex(refused)}\n`);
      // (c) nothing of the host's loopback.
      expect(output('host.txt')).not.toContain('REACHED');
      for (const port of [fake.port, (hostService.address() as net.AddressInfo).port]) expect(output('host.txt')).toContain(`/dev/tcp/127.0.0.1/${port}: Connection refused`);
      // (b) the forward, made inside the sandbox, reaches the phone's service.
      if (fs.existsSync('/usr/bin/adb')) expect(output('adb.txt')).toBe(`List of devices attached\n${PIXEL}\tdevice\n\nerror: ${refused}\n8200\n${PIXEL} tcp:8200 tcp:6790\n\n`);
      else expect(output('adb.txt')).toBe(`OKAYOKAY${hex('8200')}`);
      expect(output('service.txt')).toBe('uiautomator2 of Pixel answers GET /status');
      expect(output('removed.txt')).toContain('/dev/tcp/127.0.0.1/8200: Connection refused');
      // (d) the host's ADB server never held the forward; the relay and its control socket went with the run.
      expect(fake.requests.slice(requests).filter((request) => request.includes('forward:'))).toEqual([]);
      expect(fake.forwards.list()).toBe('');
      expect(processesWith(path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock'))).toEqual([]);
      expect(fs.readdirSync(path.join(dataDir, 'work', String(jobs), 'box')).filter((name) => name.endsWith('.sock'))).toEqual([]);
      expect((await isolated.clean(PIXEL)).ok).toBe(true);
    } finally {
      fake.device(PIXEL).tcpServices.delete('tcp:6790');
      hostService.close();
      await isolated.close();
    }
  });

  it('stops a script running under its relay (public flavour) promptly, the relay with it', async () => {
    const tests = path.join(root, 'endless-public.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', 'trap "" TERM\ntouch "$OUTPUT_DIR/started"\nwhile true; do sleep 0.1; done\n', 0o100755]]));
    const publicDir = fs.mkdtempSync(path.join(root, 'public-'));
    const isolated = driverFor(fake, publicDir, { sandbox: testSandbox(publicDir, { network: 'none' }) });
    const controller = new AbortController();
    try {
      await isolated.listDevices();
      const running = isolated.execute(job({ kind: 'server-side', app, tests: { path: tests, name: 'endless-public.zip', properties: {} } }), recorder(controller.signal).context);
      await until(() => fs.existsSync(path.join(dataDir, 'work', String(jobs), 'box', 'output', 'started')), 10_000);
      expect(processesWith(path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock')).length).toBeGreaterThan(0);
      const started = Date.now();
      controller.abort();
      const result = await running;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(result.outcome).toBe('STOPPED');
      expect(processesWith(path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock'))).toEqual([]);
      expect((await isolated.clean(PIXEL)).ok).toBe(true);
    } finally {
      await isolated.close();
    }
  });

  it('stops a server-side script and its children promptly', async () => {
    const tests = path.join(root, 'endless.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', 'trap "" TERM\nwhile true; do sleep 0.1; done\n', 0o100755]]));
    const controller = new AbortController();
    const running = driver.execute(job({ kind: 'server-side', app, tests: { path: tests, name: 'endless.zip', properties: {} } }), recorder(controller.signal).context);
    // Stopped once the script runs with children: a `sleep` of this run's (its environment names the run's ADB socket).
    const ofThisRun = path.join(dataDir, 'work', String(jobs), 'box', 'adb.sock');
    const isSleep = (pid: number) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0');
      } catch {
        return false; // gone meanwhile
      }
    };
    await until(() => processesWith(ofThisRun, 'environ').some(isSleep), 20_000);
    const started = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.outcome).toBe('STOPPED');
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('crawls each exported activity, then the monkey, catching crashes from logcat', async () => {
    const pixel = fake.device(PIXEL);
    pixel.crashingActivities.add('com.devicecloud.sample.SettingsActivity');
    try {
      const result = await driver.execute(job({ kind: 'crawler', app, tests: null, credentials: { username: 'qa', password: 'x' } }), recorder().context);
      expect(result.outcome).toBe('COMPLETED');
      expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result, testCase.errorMessage])).toEqual([
        ['launch com.devicecloud.sample.MainActivity', 'PASSED', null],
        ['launch com.devicecloud.sample.SettingsActivity', 'FAILED', 'the app crashed: java.lang.IllegalStateException: receipt must not be null'],
        [`monkey 40 events (seed ${jobs})`, 'PASSED', null],
      ]);
      expect(result.testCases![1]!.stacktrace).toContain('ReceiptActivity.onCreate');
      expect(result.artifacts.filter((artifact) => artifact.kind === 'screenshot').map((artifact) => artifact.name)).toEqual(['01-MainActivity.png', '02-SettingsActivity.png', '03-monkey.png']);
      const crawlerLog = fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'crawler.log')!.path, 'utf8');
      expect(crawlerLog).toContain('the crawler does not fill in forms');
      expect(pixel.commands).toContain(`'monkey' '-p' 'com.devicecloud.sample' '-s' '${jobs}' '--throttle' '10' '--pct-syskeys' '0' '-v' '40'`);
    } finally {
      pixel.crashingActivities.clear();
    }
    pixel.monkeyCrashes = true;
    try {
      const result = await driver.execute(job({ kind: 'crawler', app, tests: null }), recorder().context);
      expect(result.testCases!.at(-1)).toMatchObject({ result: 'FAILED', errorMessage: 'the app crashed: java.lang.IllegalStateException: receipt must not be null' });
    } finally {
      pixel.monkeyCrashes = false;
    }
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('ends a run as an infrastructure error when the phone is unplugged in the middle', async () => {
    const running = driver.execute(job(instrumentation('endless')), recorder().context);
    await until(() => fake.device(PIXEL).running.has('com.devicecloud.sample'));
    const pixel = fake.device(PIXEL);
    fake.unplug(PIXEL);
    const result = await running;
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringContaining('went away') });
    fake.devices.set(PIXEL, pixel);
    fake.setState(PIXEL, 'device');
    await until(async () => (await driver.health(PIXEL)).ok);
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('says when the ADB server cannot be reached', async () => {
    const gone = await FakeAdbServer.start();
    const port = gone.port;
    await gone.close();
    const orphan = createAdbDriver({ dataDir: fs.mkdtempSync(path.join(root, 'noserver-')), server: { host: '127.0.0.1', port }, log: () => undefined, adbBinary: path.join(root, 'no-adb-here'), sandbox: noSandbox() });
    try {
      await expect(orphan.listDevices()).rejects.toThrow(`the ADB server cannot be reached`);
    } finally {
      await orphan.close();
    }
  });
});

describe('fake ADB server', () => {
  it('answers host services and the sync protocol as the ADB server does', async () => {
    const fake = await FakeAdbServer.start([{ serial: 'WIRE1' }, { serial: 'WIRE2', state: 'unauthorized' }]);
    const client = Adb.createClient({ host: '127.0.0.1', port: fake.port });
    try {
      expect(await client.version()).toBe(0x29);
      expect(await client.listDevices()).toEqual([{ id: 'WIRE1', type: 'device' }, { id: 'WIRE2', type: 'unauthorized' }]);
      expect((await client.listDevicesWithPaths())[0]).toMatchObject({ id: 'WIRE1', type: 'device', model: 'model:Pixel_7' });
      expect(await client.getDevice('WIRE2').getState()).toBe('unauthorized');
      await expect(client.getDevice('WIRE2').getProperties()).rejects.toThrow('device unauthorized');
      await expect(client.getDevice('NOPE').getProperties()).rejects.toThrow("device 'NOPE' not found");
      const device = client.getDevice('WIRE1');
      const local = path.join(root, 'hello.txt');
      fs.writeFileSync(local, 'hello over sync\n'.repeat(10_000));
      const pushed = await device.push(local, '/data/local/tmp/x.txt');
      await new Promise((resolve, reject) => pushed.on('end', resolve).on('error', reject));
      expect((await device.stat('/data/local/tmp/x.txt')).isFile()).toBe(true);
      expect((await device.readdir('/data/local/tmp')).map((entry: { name: string }) => entry.name)).toEqual(['x.txt']);
      const pulled = await device.pull('/data/local/tmp/x.txt');
      const chunks: Buffer[] = [];
      await new Promise((resolve, reject) => pulled.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', resolve).on('error', reject));
      expect(Buffer.concat(chunks).equals(fs.readFileSync(local))).toBe(true);
      await expect(device.stat('/data/local/tmp/missing')).rejects.toThrow('ENOENT');
      expect(fake.device('WIRE1').commands).toEqual(expect.arrayContaining(['sync:SEND /data/local/tmp/x.txt,33188', 'sync:RECV /data/local/tmp/x.txt']));
    } finally {
      await fake.close();
    }
  });
});

describe('reading the screen and the accounts', () => {
  const phone = () => new FakeDevice({ serial: 'SCREEN1' });

  it('answers `uiautomator dump` on one line, in UI Automator\'s format, and reads it back', () => {
    const device = phone();
    startActivity(device, 'android.settings.ADD_ACCOUNT_SETTINGS');
    device.checkingMs = 0;
    const email = dumpScreen(device);
    expect(email.startsWith(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.google.android.gms" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">`)).toBe(true);
    expect(email).not.toContain('\n');
    expect(email).not.toContain('<!--');
    const field = parseUiDump(`UI hierchary dumped to: /data/local/tmp/x.xml\n${email}`)!.find((node) => node.resourceId === 'identifierId')!;
    expect(field).toMatchObject({ className: 'android.widget.EditText', clickable: true, password: false, bounds: { left: 63, top: 584, right: 1017, bottom: 752 } });
    tap(device, 540, 668);
    typeText(device, 'qa.devicecloud@gmail.com');
    tap(device, 915, 2205);
    typeText(device, 'secret'); // no field has focus on a new page: typed nowhere
    tap(device, 540, 704);
    typeText(device, 'a%sb');
    const nodes = parseUiDump(dumpScreen(device))!;
    expect(screenTitle(nodes)).toBe('Welcome');
    expect(nodes.find((node) => node.password)!.text).toBe('•••');
    expect(fixedTexts(nodes)).toContain('qa.devicecloud@gmail.com');
    expect(fixedTexts(nodes).join('\n')).not.toContain('•');
    expect(device.screen.password).toBe('a b');
    expect(parseUiDump('ERROR: null root node returned by UiTestAutomationBridge.')).toBeNull();
    startActivity(device, 'android.settings.SYNC_SETTINGS');
    device.accounts.push({ name: 'a&b@example.com', type: 'com.google' });
    const list = parseUiDump(dumpScreen(device))!;
    expect(screenTitle(list)).toBe('Passwords, passkeys & accounts');
    expect(list.find((node) => node.text === 'a&b@example.com')).toMatchObject({ resourceId: 'android:id/title', bounds: { top: 640, bottom: 700 } });
    expect(list.find((node) => node.text === 'Add account')!.bounds.top).toBe(850);
  });

  it('reads the owner\'s accounts from `dumpsys account`', () => {
    const device = phone();
    const output = () => recording('dumpsys-account.txt', { count: device.accounts.length }).replace('{accounts}\n', device.accounts.map((account) => `    Account {name=${account.name}, type=${account.type}}\n`).join(''));
    expect(parseAccounts(output())).toEqual([]);
    device.accounts.push({ name: 'qa@gmail.com', type: 'com.google' }, { name: '+15550100', type: 'com.google.android.apps.tachyon' });
    expect(parseAccounts(output())).toEqual([{ name: 'qa@gmail.com', type: 'com.google' }, { name: '+15550100', type: 'com.google.android.apps.tachyon' }]);
    const work = `User UserInfo{10:Work profile:1030}:\n  Accounts: 1\n    Account {name=work@corp.example, type=com.google}\n\n${output()}`;
    expect(parseAccounts(work)).toEqual([{ name: 'qa@gmail.com', type: 'com.google' }, { name: '+15550100', type: 'com.google.android.apps.tachyon' }]);
    expect(parseAccounts("Can't find service: account")).toBeNull();
  });

  it('types for `input text` with spaces as %s, and refuses what it cannot type', () => {
    expect(inputTextArgument(`it's "a" $x; y`)).toBe(`it's%s"a"%s$x;%sy`);
    expect(inputTextArgument('100%sure')).toBeNull();
    expect(inputTextArgument('pässword')).toBeNull();
    expect(inputTextArgument('')).toBeNull();
  });
});
