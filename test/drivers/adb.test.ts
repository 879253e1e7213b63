/**
 * The adb driver against a fake ADB server that speaks the wire protocol (test/support/fake-adb):
 * the conformance suite, then what is particular to phones. No phone is involved; the same
 * conformance cases run on a real one in test/hardware/adb.hw.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { Adb } from '../../src/agent/drivers/adb/adbkit.ts';
import { baselinePath } from '../../src/agent/drivers/adb/baseline.ts';
import { type AdbDriverOptions, createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { testApk, localFile } from '../support/fake-adb/apks.ts';
import { FakeAdbServer, recording } from '../support/fake-adb/index.ts';
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

  beforeAll(async () => {
    fake = await FakeAdbServer.start([{ serial: PIXEL }, { serial: MOTO, model: 'moto-g5' }]);
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
    expect(baseline).toMatchObject({ wifiOn: true, locale: 'en-US' });
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
    const account = await driver.execute(job({ ...instrumentation('sample'), deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa@example.com', password: 'x' } } }), recorder().context);
    expect(account).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringContaining('signing in a Google account is not automated') });
    const old = await driver.execute(job({ ...instrumentation('sample'), serial: MOTO, deviceSettings: { locale: 'de_DE', wifi: null, googleAccount: null } }), recorder().context);
    expect(old).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringContaining('below Android 13 the locale can only be set as the system locale, which needs a rooted phone') });
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

  it('cleans LIGHT on the public cloud: packages, browsers and settings, but no file deletion and no reboot', async () => {
    const pixel = fake.device(PIXEL);
    await driver.execute(job(instrumentation('trace')), recorder().context);
    const boots = pixel.boots;
    const light = await driver.clean(PIXEL, 'LIGHT');
    expect(light.ok, light.report).toBe(true);
    expect(light.report).toContain('light cleaning: storage kept, no reboot');
    expect(pixel.boots).toBe(boots);
    expect([...pixel.packages.keys()].filter((name) => name.startsWith('com.devicecloud'))).toEqual([]);
    expect(pixel.settings.get('global/wifi_on')).toBe('1');
    expect(pixel.below('/sdcard/Download')).toEqual(['/sdcard/Download/left-behind.txt']);
    expect((await driver.clean(PIXEL)).ok).toBe(true);
    expect(pixel.below('/sdcard/Download')).toEqual([]);
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

  it('runs server-side packages with the phone\'s serial and ADB server in the environment', async () => {
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
    expect(result.outcome).toBe('COMPLETED');
    expect(result.exitCode).toBe(0);
    const junit = fs.readFileSync(result.artifacts.find((artifact) => artifact.kind === 'junit')!.path, 'utf8');
    expect(junit).toContain('name="model Pixel 7"');
    const env = fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'env.txt')!.path, 'utf8');
    for (const line of [`ANDROID_SERIAL=${PIXEL}`, `ADB_SERVER_SOCKET=tcp:127.0.0.1:${fake.port}`, 'APP_PACKAGE=com.devicecloud.sample', 'APP_ACTIVITY=com.devicecloud.sample.MainActivity', 'DEVICE_API_LEVEL=34', 'BASE_URL=https://staging']) expect(env).toContain(line);
    expect(env).not.toContain('ANDROID_SERIAL=other');
    expect(env).not.toContain('dca_never_leaks');
    expect(result.artifacts.map((artifact) => artifact.name)).toEqual(expect.arrayContaining(['test.log', 'logcat.txt', '01-final.png']));
    expect((await driver.clean(PIXEL)).ok).toBe(true);
  });

  it('stops a server-side script and its children promptly', async () => {
    const tests = path.join(root, 'endless.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', 'trap "" TERM\nwhile true; do sleep 0.1; done\n', 0o100755]]));
    const controller = new AbortController();
    const running = driver.execute(job({ kind: 'server-side', app, tests: { path: tests, name: 'endless.zip', properties: {} } }), recorder(controller.signal).context);
    await sleep(1500);
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
    const orphan = createAdbDriver({ dataDir: fs.mkdtempSync(path.join(root, 'noserver-')), server: { host: '127.0.0.1', port }, log: () => undefined, adbBinary: path.join(root, 'no-adb-here') });
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
