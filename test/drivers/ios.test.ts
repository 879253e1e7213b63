/**
 * The iOS driver against the fake go-ios (test/support/fake-ios): the conformance cases with
 * XCUITest runners as the tests, then what is particular to iOS: re-signing, refused builds,
 * XCTest bundles, results, crashes, the crawler, cleaning back to the baseline, device settings,
 * health, and the checks at agent start.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { noSandbox } from '../../src/agent/drivers/host/sandbox.ts';
import { createDriver } from '../../src/agent/drivers/index.ts';
import { type IosDriverOptions, createIosDriver, iosDriverFromSettings } from '../../src/agent/drivers/ios/index.ts';
import { GoIos } from '../../src/agent/drivers/ios/go-ios.ts';
import { findGoIos } from '../../src/agent/drivers/ios/setup.ts';
import { type Signer, goIosSigner, loadSigningSetup, zsignSigner } from '../../src/agent/drivers/ios/signer.ts';
import { decide } from '../../src/agent/executor.ts';
import { ConfigError } from '../../src/config.ts';
import { FAKE_IOS, FAKE_ZSIGN, FakeIos, LAB_DEVICES, LAB_TOOL, WDA_BUNDLE, ipa, provisioningProfile, runnerZip, signingFolder, xctestZip } from '../support/fake-ios/index.ts';
import { until } from '../support/until.ts';
import { type DriverFixtures, type JobSpec, describeDriverConformance, recorder } from './conformance.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-ios-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const APP_ID = 'com.devicecloud.sample';
const RUNNER_ID = 'com.devicecloud.sample.SampleUITests.xctrunner';
const [PHONE_1, PHONE_2] = LAB_DEVICES.map((device) => device.udid) as [string, string];

async function file(name: string, content: Buffer | Promise<Buffer>): Promise<LocalFile> {
  const target = path.join(root, 'uploads', name);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, await content);
  return { path: target, name, properties: {} };
}

const app = () => file('sample-app.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', displayName: 'Sample Shop', screens: ['Home', 'Settings', 'About'] }));
const runner = (scenario: string) => file(`${scenario}-runner.zip`, runnerZip({ bundleId: RUNNER_ID, xctest: 'SampleUITests.xctest', scenario }));
const xcuitest = async (scenario: string): Promise<JobSpec> => ({ kind: 'xcuitest', app: await app(), tests: await runner(scenario) });

const fixtures: DriverFixtures = {
  passing: () => xcuitest('passing'),
  failing: () => xcuitest('failing'),
  endless: () => xcuitest('endless'),
  leavesTrace: () => xcuitest('trace'),
  expectsClean: () => xcuitest('check-clean'),
  unsupportedKind: 'instrumentation',
};

interface World {
  readonly driver: Driver;
  readonly fake: FakeIos;
  readonly dataDir: string;
  readonly signingDir: string;
}

let worlds = 0;
function world(options: { signer?: 'go-ios' | 'zsign' | Signer; password?: string; profileDevices?: readonly string[]; driver?: Partial<IosDriverOptions> } = {}): World {
  const dir = path.join(root, `world-${++worlds}`);
  const fake = new FakeIos(path.join(dir, 'fake'));
  const signingDir = signingFolder(path.join(dir, 'signing'), {
    password: options.password,
    profile: provisioningProfile('development', { name: 'devicecloud lab', devices: options.profileDevices }),
  });
  const signing = loadSigningSetup(signingDir);
  const goIos = new GoIos(FAKE_IOS, fake.env);
  const signer = options.signer === 'zsign' ? zsignSigner(FAKE_ZSIGN, signing, fake.env) : options.signer === undefined || options.signer === 'go-ios' ? goIosSigner(goIos, signing) : options.signer;
  const dataDir = path.join(dir, 'agent');
  const driver = createIosDriver({ dataDir, goIos, signing, signer, pollMs: 100, bootTimeoutMs: 10_000, crawlLimits: { maxTaps: 30, maxScreens: 10, settleMs: 50 }, ...options.driver });
  return { driver, fake, dataDir, signingDir };
}

/** Another driver on the same phones, data dir and signing folder, as after an agent restart. */
function restartedDriver(w: World): Driver {
  const goIos = new GoIos(FAKE_IOS, w.fake.env);
  const signing = loadSigningSetup(w.signingDir);
  return createIosDriver({ dataDir: w.dataDir, goIos, signing, signer: goIosSigner(goIos, signing), pollMs: 100 });
}

describeDriverConformance('ios (fake go-ios)', async () => {
  const { driver } = world();
  return { driver, fixtures, cleanup: async () => undefined };
});

let runs = 0;
function job(spec: JobSpec & Partial<Job>, serial = PHONE_1): Job {
  const workDir = path.join(root, 'work', String(++runs));
  fs.mkdirSync(workDir, { recursive: true });
  return { deviceRunId: runs, serial, data: [], parameters: {}, timeoutSeconds: 60, locale: 'en_US', deviceSettings: null, launchApp: true, credentials: null, workDir, ...spec };
}

const called = (fake: FakeIos, command: string) => fake.calls().filter((args) => args[0] === command);

describe('ios driver: installing builds', () => {
  let w: World;
  beforeAll(async () => {
    w = world();
    await w.driver.listDevices();
  });

  it('lists the phones by model and iOS version, for XCTest, XCUITest and the crawler', async () => {
    expect((await w.driver.listDevices()).map((device) => [device.serial, device.displayName, device.releaseVersion, device.osType, device.apiLevel])).toEqual([
      [PHONE_1, 'Apple iPhone 15', '17.4.1', 'IOS', null],
      [PHONE_2, 'Apple iPhone 13', '16.7.8', 'IOS', null],
    ]);
    expect((await w.driver.listDevices())[0]!.executionKinds).toEqual(['xctest', 'xcuitest', 'crawler']);
  });

  it("re-signs the app and the runner with the service's profile before installing them", async () => {
    w.fake.clearCalls();
    const result = await w.driver.execute(job(await xcuitest('passing')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    const calls = w.fake.calls();
    const signs = calls.filter((args) => args[0] === 'sign');
    expect(signs).toHaveLength(2);
    expect(signs[0]).toEqual([
      'sign',
      'app',
      expect.stringMatching(/\/app\/Payload\/Sample\.app$/),
      `--p12file=${path.join(w.signingDir, 'identity.p12')}`,
      `--profile=${path.join(w.signingDir, 'profile.mobileprovision')}`,
      expect.stringMatching(/^--output=.*\/signed\/app\/Sample\.app$/),
      `--udid=${PHONE_1}`,
    ]);
    // Each install comes after the signing of what it installs, and installs the signed copy.
    const installs = calls.map((args, index) => [args, index] as const).filter(([args]) => args[0] === 'install');
    expect(installs.map(([args]) => args[1])).toEqual([signs[0]![5]!.replace('--output=', '--path='), signs[1]![5]!.replace('--output=', '--path=')]);
    expect(calls.indexOf(signs[1]!)).toBeLessThan(installs[1]![1]);
    const installed = w.fake.device(PHONE_1).apps;
    expect(installed[APP_ID]).toMatchObject({ signedBy: 'signed by fake go-ios with identity.p12', profile: 'devicecloud lab' });
    expect(installed[RUNNER_ID]).toMatchObject({ profile: 'devicecloud lab' });
    expect((await w.driver.clean(PHONE_1)).ok).toBe(true);
  });

  it('refuses App Store, enterprise and simulator builds with the reason, before signing anything', async () => {
    w.fake.clearCalls();
    const appStore = await file('store.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'app-store' }));
    const result = await w.driver.execute(job({ kind: 'xcuitest', app: appStore, tests: await runner('passing') }), recorder().context);
    expect(result).toMatchObject({ outcome: 'COMPLETED', testCases: [], failReason: expect.stringMatching(/^store\.ipa is an app-store distribution build .*upload an ad-hoc or development build$/) });
    const inHouse = await file('inhouse.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'enterprise' }));
    expect((await w.driver.execute(job({ kind: 'crawler', app: inHouse, tests: null }), recorder().context)).failReason).toMatch(/^inhouse\.ipa is an enterprise distribution build/);
    // The executor makes that a failed run, not a retried infrastructure problem.
    expect(decide(result, { cases: [], problem: null }, null)).toMatchObject({ outcome: 'FAILED', failReason: result.failReason });
    const simulator = await file('sim.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', simulator: true }));
    expect((await w.driver.execute(job({ kind: 'crawler', app: simulator, tests: null }), recorder().context)).failReason).toMatch(/simulator build/);
    const bare = await file('bare.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'none' }));
    expect((await w.driver.execute(job({ kind: 'crawler', app: bare, tests: null }), recorder().context)).failReason).toMatch(/no embedded provisioning profile/);
    expect(w.fake.calls().filter((args) => args[0] === 'sign' || args[0] === 'install')).toEqual([]);
  });

  it("does not install a build the signer left without the service's profile", async () => {
    const lazy: Signer = {
      name: 'lazy signer',
      async sign(appDir, outDir) {
        const output = path.join(outDir, path.basename(appDir));
        fs.cpSync(appDir, output, { recursive: true });
        return output;
      },
    };
    const other = world({ signer: lazy });
    const result = await other.driver.execute(job({ kind: 'crawler', app: await app(), tests: null }), recorder().context);
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: "re-signing Sample.app with lazy signer left another provisioning profile in it, not the service's" });
    expect(called(other.fake, 'install')).toEqual([]);
  });

  it('signs with zsign when configured, the identity password included, and installs its .ipa', async () => {
    const zsigned = world({ signer: 'zsign', password: 's3cret' });
    const result = await zsigned.driver.execute(job(await xcuitest('passing')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    const zsign = zsigned.fake.calls().find((args) => args[0] === 'zsign')!;
    expect(zsign).toEqual([
      'zsign',
      '-k',
      path.join(zsigned.signingDir, 'identity.p12'),
      '-p',
      's3cret',
      '-m',
      path.join(zsigned.signingDir, 'profile.mobileprovision'),
      '-o',
      expect.stringMatching(/\/signed\/app\/Sample\.ipa$/),
      '-z',
      '1',
      expect.stringMatching(/\/app\/Payload\/Sample\.app$/),
    ]);
    expect(called(zsigned.fake, 'install')[0]).toEqual(['install', `--path=${zsign[8]}`, `--udid=${PHONE_1}`]);
    expect(zsigned.fake.device(PHONE_1).apps[APP_ID]!.signedBy).toBe('signed by fake zsign with identity.p12');
  });

  it('a wrong identity password fails the run as an infrastructure problem, naming the signer', async () => {
    const wrong = world({ password: 'right' });
    fs.writeFileSync(path.join(wrong.signingDir, 'identity-password'), 'wrong\n');
    const result = await restartedDriver(wrong).execute(job({ kind: 'crawler', app: await app(), tests: null }), recorder().context);
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringMatching(/^re-signing Sample\.app failed: ios sign app .* failed: failed signing app: .*decryption password incorrect$/) });
    // Users see fail reasons: the password is not in it.
    expect(result.failReason).toContain('--p12password=… ');
    expect(result.failReason).not.toContain('wrong');
  });
});

describe('ios driver: running tests', () => {
  let w: World;
  beforeAll(() => {
    w = world();
  });

  it('runs an XCTest bundle inside the app, with skips and expected failures', async () => {
    w.fake.clearCalls();
    const tests = await file('SampleTests.zip', xctestZip('SampleTests.xctest', 'unit'));
    const result = await w.driver.execute(job({ kind: 'xctest', app: await app(), tests }), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.className, testCase.methodName, testCase.result])).toEqual([
      ['SampleTests', 'testPriceFormatting', 'PASSED'],
      ['SampleTests', 'testNeedsNetwork', 'SKIPPED'],
      ['SampleTests', 'testKnownRoundingBug', 'PASSED'],
    ]);
    expect(called(w.fake, 'runtest')[0]).toEqual([
      'runtest',
      `--bundle-id=${APP_ID}`,
      `--test-runner-bundle-id=${APP_ID}`,
      '--xctest-config=SampleTests.xctest',
      '--xctest',
      expect.stringMatching(/^--log-output=.*\/logs\/xctest\.log$/),
      `--udid=${PHONE_1}`,
    ]);
    // The bundle went into the app's PlugIns before signing, so the installed app carries it.
    expect(Object.keys(w.fake.device(PHONE_1).apps[APP_ID]!.xctests!)).toEqual(['SampleTests.xctest']);
    await w.driver.clean(PHONE_1);
  });

  it('hands run parameters to the tests as environment variables, leaving out what go-ios would mangle', async () => {
    w.fake.clearCalls();
    await w.driver.execute(job({ ...(await xcuitest('passing')), parameters: { BASE_URL: 'https://staging.example.com', 'bad-name': 'x', QUERY: 'a=b' } }), recorder().context);
    const runtest = called(w.fake, 'runtest')[0]!;
    expect(runtest.filter((arg) => arg.startsWith('--env='))).toEqual(['--env=BASE_URL=https://staging.example.com']);
    await w.driver.clean(PHONE_1);
  });

  it('records the device log, CPU samples, the test log, XCTest screenshots and the last screen', async () => {
    const { context, samples } = recorder();
    const result = await w.driver.execute(job(await xcuitest('passing')), context);
    const byName = new Map(result.artifacts.map((artifact) => [artifact.name, artifact]));
    expect([...byName.keys()].sort()).toEqual(['01-Checkout_screen.png', 'device.log', 'final.png', 'go-ios.log', 'xctest.log']);
    expect(byName.get('01-Checkout_screen.png')!.kind).toBe('screenshot');
    expect(fs.readFileSync(byName.get('01-Checkout_screen.png')!.path).subarray(1, 4).toString()).toBe('PNG');
    expect(fs.readFileSync(byName.get('device.log')!.path, 'utf8')).toContain(`Now tracking process: [app<${APP_ID}((null))>:1212]`);
    expect(fs.readFileSync(byName.get('xctest.log')!.path, 'utf8')).toContain("Test Case '-[CheckoutUITests testPayWithValidCard]' passed (0.598 seconds).");
    expect(samples.length).toBeGreaterThan(0);
    expect(samples[0]).toEqual({ timestamp: expect.any(Number), cpuUsage: 62.5 / 600, memUsage: null, packageName: null });
    await w.driver.clean(PHONE_1);
  });

  it('tells a crash from a failure: the unfinished test names the crash report, which is attached', async () => {
    const result = await w.driver.execute(job(await xcuitest('crash')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['testBrowseCatalogue', 'PASSED'],
      ['testOpenBrokenScreen', 'FAILED'],
    ]);
    expect(result.testCases![1]!.errorMessage).toMatch(/did not finish.*; the app crashed \(Sample-2026-01-01-120002\.ips\)$/);
    const report = result.artifacts.find((artifact) => artifact.name === 'crash-Sample-2026-01-01-120002.ips')!;
    expect(fs.readFileSync(report.path, 'utf8')).toContain('EXC_CRASH (SIGABRT)');
    await w.driver.clean(PHONE_1);
  });

  it('reports why tests could not run when the developer disk image is missing', async () => {
    w.fake.updateDevice(PHONE_1, (device) => {
      device.ddiMounted = false;
    });
    const result = await w.driver.execute(job(await xcuitest('passing')), recorder().context);
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringMatching(/^the tests could not be run: Failed running Xcuitest: failed connecting to com\.apple\.testmanagerd/) });
    const cleaned = await w.driver.clean(PHONE_1);
    expect(cleaned.report).toContain('mounted the developer disk image');
    expect(w.fake.device(PHONE_1).ddiMounted).toBe(true);
  });
});

describe('ios driver: the crawler', () => {
  it('explores the app through its accessibility tree: signs in, screenshots each screen, catches a crash, comes back', async () => {
    const w = world();
    const shop = await file('shop.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', displayName: 'Sample Shop', screens: ['Home', 'Settings', 'Checkout', 'About'], signIn: true, crashOnScreen: 'Checkout' }));
    const result = await w.driver.execute(job({ kind: 'crawler', app: shop, tests: null, credentials: { username: 'qa', password: 'secret' } }), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['sign in', 'PASSED'],
      ['launch (Home)', 'PASSED'],
      ['screen: Settings', 'PASSED'],
      ['crash after tapping "Checkout" on "Home"', 'FAILED'],
      ['screen: About', 'PASSED'],
    ]);
    expect(result.testCases![3]!.errorMessage).toBe('the app crashed after tapping "Checkout" on "Home" (Sample-2026-01-01-120000.ips)');
    expect(result.artifacts.filter((artifact) => artifact.kind === 'screenshot').map((artifact) => artifact.name)).toEqual(['01-Home.png', '02-Settings.png', '03-About.png']);
    expect(result.artifacts.some((artifact) => artifact.name === 'crash-Sample-2026-01-01-120000.ips')).toBe(true);
    expect(fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'crawler.log')!.path, 'utf8')).toContain('tapping "Settings" on "Home"');
    // WebDriverAgent was started through go-ios and is gone again.
    expect(called(w.fake, 'runwda')).toEqual([['runwda', `--udid=${PHONE_1}`]]);
    expect(called(w.fake, 'forward')[0]).toEqual(['forward', expect.stringMatching(/^\d+$/), '8100', `--udid=${PHONE_1}`]);
    expect(w.fake.device(PHONE_1).wdaPort).toBeNull();
  });

  it('stops promptly when aborted, and takes WebDriverAgent down with it', async () => {
    const w = world({ driver: { crawlLimits: { maxTaps: 30, maxScreens: 10, settleMs: 3000 } } });
    const controller = new AbortController();
    const { context, steps } = recorder(controller.signal);
    const crawl = job({ kind: 'crawler', app: await app(), tests: null });
    const crawling = w.driver.execute(crawl, context);
    // Stopped mid-crawl: WebDriverAgent is up and the crawler has taken its first screenshot.
    const shots = path.join(crawl.workDir, 'screenshots');
    await until(() => ({ wda: w.fake.device(PHONE_1).wdaPort, running: steps.includes('RUNNING'), shots: fs.existsSync(shots) ? fs.readdirSync(shots).length : 0 }), (seen) => seen.wda !== null && seen.running && seen.shots > 0, 20_000);
    const stopped = Date.now();
    controller.abort();
    const result = await crawling;
    expect(Date.now() - stopped).toBeLessThan(5000);
    expect(result.outcome).toBe('STOPPED');
    expect(w.fake.device(PHONE_1).wdaPort).toBeNull();
  });

  it('is an infrastructure problem when WebDriverAgent is not on the device', async () => {
    const w = world();
    w.fake.updateDevice(PHONE_1, (device) => {
      delete device.apps[WDA_BUNDLE];
    });
    const result = await w.driver.execute(job({ kind: 'crawler', app: await app(), tests: null }), recorder().context);
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: 'the crawler could not drive the device: go-ios could not start WebDriverAgent: Failed running WDA: app com.facebook.WebDriverAgentRunner.xctrunner not installed' });
  });
});

describe('ios driver: cleaning and device settings', () => {
  it('removes what runs installed, keeps the baseline, restores the region, reboots, and checks', async () => {
    const w = world();
    await w.driver.listDevices();
    const baselineFile = path.join(w.dataDir, 'devices', PHONE_1, 'baseline.json');
    expect(JSON.parse(fs.readFileSync(baselineFile, 'utf8'))).toMatchObject({ apps: [LAB_TOOL, WDA_BUNDLE], language: { language: 'en', locale: 'en_US' } });
    // Installed after the agent first saw the phone: not part of its baseline.
    w.fake.updateDevice(PHONE_1, (device) => {
      device.apps['com.example.leftover'] = { info: { CFBundleIdentifier: 'com.example.leftover' }, path: '/x' };
    });
    const run = await w.driver.execute(job({ ...(await xcuitest('passing')), deviceSettings: { locale: 'fi_FI', wifi: null, googleAccount: null } }), recorder().context);
    expect(run.outcome).toBe('COMPLETED');
    expect(w.fake.device(PHONE_1)).toMatchObject({ language: 'fi', locale: 'fi_FI' });
    w.fake.clearCalls();

    const cleaned = await w.driver.clean(PHONE_1);
    expect(cleaned).toEqual({
      ok: true,
      report: `removed 3 app(s) (${APP_ID}, ${RUNNER_ID}, com.example.leftover), restored language en and region en_US, rebooted, mounted the developer disk image, verified`,
    });
    const device = w.fake.device(PHONE_1);
    expect(Object.keys(device.apps).sort()).toEqual([LAB_TOOL, WDA_BUNDLE]);
    expect(device.containers).toEqual({ [LAB_TOOL]: ['settings.json'] });
    expect(device).toMatchObject({ locale: 'en_US', language: 'en', boots: 1, ddiMounted: true });
    const order = w.fake.calls().map((args) => args[0]);
    expect(order.indexOf('reboot')).toBeGreaterThan(order.lastIndexOf('uninstall'));
    expect(order.indexOf('image')).toBeGreaterThan(order.indexOf('reboot'));

    // A restarted agent (same data dir) keeps the baseline it recorded.
    const again = restartedDriver(w);
    w.fake.updateDevice(PHONE_1, (phone) => {
      phone.apps['com.example.other'] = { info: { CFBundleIdentifier: 'com.example.other' }, path: '/y' };
    });
    expect((await again.clean(PHONE_1)).report).toMatch(/^removed 1 app\(s\) \(com\.example\.other\), rebooted/);
  });

  it('cleans lightly on the public cloud: uninstalls, without a reboot', async () => {
    const w = world();
    await w.driver.listDevices();
    expect((await w.driver.execute(job(await xcuitest('trace')), recorder().context)).outcome).toBe('COMPLETED');
    expect(w.fake.device(PHONE_1).containers[APP_ID]).toEqual(['left-behind.txt']);
    const cleaned = await w.driver.clean(PHONE_1, 'LIGHT');
    expect(cleaned).toEqual({ ok: true, report: `removed 2 app(s) (${APP_ID}, ${RUNNER_ID}), no reboot (light cleaning), verified` });
    expect(w.fake.device(PHONE_1).containers[APP_ID]).toBeUndefined();
    expect(called(w.fake, 'reboot')).toEqual([]);
  });

  it('fails cleaning, with go-ios\' reason, when the phone does not reboot', async () => {
    const w = world();
    w.fake.updateDevice(PHONE_2, (device) => {
      device.failReboot = true;
    });
    const cleaned = await w.driver.clean(PHONE_2);
    expect(cleaned.ok).toBe(false);
    expect(cleaned.report).toMatch(/^ios reboot --udid=\S+ failed: reboot failed: diagnostics_relay: Restart request was not accepted \(after: no apps to remove\)$/);
  });

  it('fails cleaning when the phone does not come back in time', async () => {
    const w = world({ driver: { bootTimeoutMs: 1000 } });
    w.fake.update((state) => {
      state.rebootMs = 60_000;
    });
    const cleaned = await w.driver.clean(PHONE_2);
    expect(cleaned).toEqual({ ok: false, report: 'the device did not come back within 1 s of the reboot (after: no apps to remove)' });
  });

  it('refuses Wi-Fi and Google account settings by name, before touching the phone', async () => {
    const w = world();
    w.fake.clearCalls();
    const wifi = await w.driver.execute(job({ kind: 'crawler', app: await app(), tests: null, deviceSettings: { locale: null, wifi: false, googleAccount: null } }), recorder().context);
    expect(wifi).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringMatching(/switch Wi-Fi off/) });
    const google = await w.driver.execute(job({ kind: 'crawler', app: await app(), tests: null, deviceSettings: { locale: 'fi_FI', wifi: null, googleAccount: { email: 'qa@example.com', password: 'x' } } }), recorder().context);
    expect(google.failReason).toMatch(/Google account/);
    expect(w.fake.calls()).toEqual([]);
  });
});

describe('ios driver: health and start-up checks', () => {
  it('calls a phone unhealthy when go-ios does not see it or the service profile leaves it out', async () => {
    const w = world({ profileDevices: [PHONE_1] });
    expect(await w.driver.health(PHONE_1)).toEqual({ ok: true });
    expect(await w.driver.health(PHONE_2)).toEqual({ ok: false, reason: expect.stringMatching(/profile "devicecloud lab" does not include this device \(00008101-000C0D0E0F101112\)/) });
    w.fake.updateDevice(PHONE_1, (device) => {
      device.offlineUntil = Date.now() + 3_600_000;
    });
    // The driver lists the phones anew once its short-lived list is stale: wait for that, not for its age.
    expect(await until(() => w.driver.health(PHONE_1), (health) => !health.ok, 20_000)).toEqual({ ok: false, reason: 'go-ios does not see the device: unplugged, not trusted, or usbmuxd stopped' });
  });

  it('lists the phones that answer when one does not trust the host yet', async () => {
    const w = world();
    w.fake.updateDevice(PHONE_2, (device) => {
      device.untrusted = true;
    });
    expect((await w.driver.listDevices()).map((device) => [device.serial, device.displayName, device.releaseVersion])).toEqual([[PHONE_1, 'Apple iPhone 15', '17.4.1']]);
    expect(w.fake.calls().map((args) => args.join(' '))).toEqual(expect.arrayContaining(['list --details', 'list', `info --udid=${PHONE_1}`, `info --udid=${PHONE_2}`]));
    // go-ios 1.2.0 panics listing the apps of a phone that is not paired (recorded).
    expect(await w.driver.clean(PHONE_2)).toEqual({
      ok: false,
      report: `ios apps --udid=${PHONE_2} failed: go-ios crashed: panic: runtime error: invalid memory address or nil pointer dereference`,
    });
  });

  it('says usbmuxd is missing when go-ios cannot list devices (go-ios 1.2.0\'s own words)', async () => {
    const w = world();
    w.fake.update((state) => {
      state.usbmuxd = false;
    });
    await expect(w.driver.listDevices()).rejects.toThrow(
      'go-ios cannot list the iOS devices: ios list --details failed: failed getting device list: dial unix /var/run/usbmuxd: connect: no such file or directory (is usbmuxd running? see docs/device-hosts.md#ios)',
    );
  });

  it('stops the agent start with one clear line when go-ios or the signing folder is missing or wrong', () => {
    const dataDir = path.join(root, 'startup');
    const signing = signingFolder(path.join(root, 'startup-signing'));
    expect(() => iosDriverFromSettings({ dataDir, binary: '/nowhere/ios', signingDir: signing })).toThrow(/^--ios-bin \/nowhere\/ios is not an executable file; install go-ios/);
    expect(() => findGoIos(undefined, { PATH: '/nowhere' })).toThrow(/^go-ios was not found: install go-ios on this host/);
    const onPath = path.join(root, 'bin');
    fs.mkdirSync(onPath, { recursive: true });
    fs.copyFileSync(FAKE_IOS, path.join(onPath, 'ios'));
    fs.chmodSync(path.join(onPath, 'ios'), 0o755);
    expect(findGoIos(undefined, { PATH: `/nowhere:${onPath}` })).toBe(path.join(onPath, 'ios'));
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS })).toThrow(/^no signing folder was given: --ios-signing/);
    const adhoc = signingFolder(path.join(root, 'adhoc-signing'), { profile: provisioningProfile('ad-hoc') });
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: adhoc })).toThrow(/is an ad-hoc profile; the service needs a development profile \(get-task-allow\)/);
    const expired = signingFolder(path.join(root, 'expired-signing'), { profile: provisioningProfile('development', { name: 'old', expires: new Date(Date.UTC(2020, 0, 1)) }) });
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: expired })).toThrow(/\("old"\) expired on 2020-01-01/);
    fs.rmSync(path.join(signing, 'identity.p12'));
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: signing })).toThrow(/has no identity\.p12/);
    const good = signingFolder(path.join(root, 'good-signing'));
    expect(iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: good, signer: FAKE_ZSIGN }).name).toBe('ios');
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: good, signer: '/nowhere/zsign' })).toThrow('--ios-signer /nowhere/zsign is neither go-ios nor an executable zsign');
    // Through `--driver ios`, the same problems are configuration errors (exit code 3, one line).
    const start = () => createDriver('ios', { dataDir, virtualDevices: 0, ios: { binary: '/nowhere/ios', signingDir: good }, sandbox: noSandbox() });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/^The ios driver cannot start: --ios-bin \/nowhere\/ios is not an executable file/);
  });
});
