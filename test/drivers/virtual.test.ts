import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { SCRIPT_LOG_LIMIT_BYTES as LOG_LIMIT_BYTES } from '../../src/agent/drivers/host/test-script.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { TICKS_PER_SECOND, groupUsage } from '../../src/agent/drivers/host/process-tree.ts';
import { inspectFile } from '../../src/files/inspect/index.ts';
import { processesWith, testSandbox } from '../support/sandbox.ts';
import { zip } from '../support/zips.ts';
import { type DriverFixtures, type JobSpec, describeDriverConformance, probeVideo, recorder } from './conformance.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-virtual-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let examples: Record<string, string>;
let app: LocalFile;

beforeAll(async () => {
  examples = await buildExamples(path.join(root, 'examples'));
  app = {
    path: examples['sample-app.apk']!,
    name: 'sample-app.apk',
    properties: (await inspectFile(examples['sample-app.apk']!, 'sample-app.apk')).properties,
  };
});

async function testPackage(name: string, script: string): Promise<LocalFile> {
  const file = path.join(root, `${name}.zip`);
  fs.writeFileSync(file, await zip([['run-tests.sh', script, 0o100755]]));
  return { path: file, name: `${name}.zip`, properties: {} };
}

const junit = (cases: string) => `cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="s">${cases}</testsuite>
XML
`;

const serverSide = async (name: string, script: string): Promise<JobSpec> => ({
  kind: 'server-side',
  app,
  tests: await testPackage(name, script),
});

const fixtures: DriverFixtures = {
  passing: async () => ({
    kind: 'server-side',
    app,
    tests: { path: examples['tests-green.zip']!, name: 'tests-green.zip', properties: {} },
  }),
  failing: async () => ({
    kind: 'server-side',
    app,
    tests: { path: examples['tests-failing.zip']!, name: 'tests-failing.zip', properties: {} },
  }),
  endless: () => serverSide('endless', 'while true; do sleep 0.1; done\n'),
  leavesTrace: () =>
    serverSide(
      'trace',
      `echo secret > "$DEVICE_STORAGE/left-behind.txt"\n${junit('<testcase classname="c" name="trace"/>')}`,
    ),
  expectsClean: () =>
    serverSide(
      'check',
      `if [ -e "$DEVICE_STORAGE/left-behind.txt" ]; then r='<failure message="trace found"/>'; else r=''; fi
${junit('<testcase classname="c" name="clean">$r</testcase>')}`,
    ),
  unsupportedKind: 'instrumentation',
};

describeDriverConformance('virtual', async () => {
  const dataDir = fs.mkdtempSync(path.join(root, 'conformance-'));
  const driver = createVirtualDriver({ dataDir, devices: defaultVirtualDevices(1, 1), sandbox: testSandbox(dataDir) });
  return { driver, fixtures, cleanup: () => driver.close() };
});

describe('virtual driver videos', () => {
  it("starts the next session's ffmpeg while a device that records is cleaned, records with it, and stops it when closed", async () => {
    const dataDir = fs.mkdtempSync(path.join(root, 'standby-'));
    const standbyDir = path.join(dataDir, 'video-standby');
    const driver = createVirtualDriver({
      dataDir,
      devices: defaultVirtualDevices(2, 0),
      sandbox: testSandbox(dataDir),
    });
    const [recording, quiet] = ['virtual-android-1', 'virtual-android-2'];
    try {
      // A device that never recorded gets none: a host whose runs never record runs no ffmpeg.
      await driver.clean(quiet!);
      expect(processesWith(standbyDir)).toEqual([]);
      const first = await (await driver.record(recording!, fs.mkdtempSync(path.join(root, 'v-')))).stop();
      expect(first.file, first.file === null ? first.reason : '').not.toBeNull();
      await driver.clean(recording!);
      const [waiting, ...others] = processesWith(standbyDir);
      expect(waiting).toBeDefined();
      expect(others).toEqual([]);
      await driver.clean(recording!);
      expect(processesWith(standbyDir)).toEqual([waiting]);

      const dir = fs.mkdtempSync(path.join(root, 'v-'));
      const session = await driver.record(recording!, dir);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const video = await session.stop();
      expect(video).toEqual({ file: path.join(dir, 'video.mp4') });
      expect(probeVideo(video.file!)).toMatchObject({ codec: 'h264', format: expect.stringContaining('mp4') });
      // It recorded with the waiting one, whose file moved where the session wanted it.
      expect(fs.readdirSync(standbyDir)).toEqual([]);
      await until(() => !processesWith(standbyDir).includes(waiting!));

      await driver.clean(recording!);
      expect(processesWith(standbyDir)).toHaveLength(1);
    } finally {
      await driver.close();
    }
    expect(processesWith(standbyDir)).toEqual([]);
    expect(fs.readdirSync(standbyDir)).toEqual([]);
  });
});

/** Polls until `done` holds (a busy machine may take a while). */
async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`gave up after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('virtual driver', () => {
  let driver: Driver;
  let dataDir: string;
  let jobs = 0;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(root, 'virtual-'));
    driver = createVirtualDriver({ dataDir, devices: defaultVirtualDevices(2, 1), sandbox: testSandbox(dataDir) });
  });
  afterAll(() => driver.close());

  const job = (spec: JobSpec & Partial<Job>): Job => {
    jobs += 1;
    const workDir = path.join(dataDir, 'work', String(jobs));
    fs.mkdirSync(workDir, { recursive: true });
    return {
      deviceRunId: jobs,
      serial: 'virtual-android-1',
      data: [],
      parameters: {},
      timeoutSeconds: 60,
      locale: 'en_US',
      deviceSettings: null,
      launchApp: true,
      credentials: null,
      workDir,
      ...spec,
    };
  };

  it('offers realistic devices that run server-side tests, the crawler, Appium client side and interactive sessions only', async () => {
    const devices = await driver.listDevices();
    expect(devices.map((device) => [device.serial, device.displayName, device.osType, device.releaseVersion])).toEqual([
      ['virtual-android-1', 'Google Pixel 8', 'ANDROID', '14'],
      ['virtual-android-2', 'Samsung Galaxy S24', 'ANDROID', '14'],
      ['virtual-ios-1', 'Apple iPhone 15', 'IOS', '17.4'],
    ]);
    expect(devices[0]!.executionKinds).toEqual(['server-side', 'crawler', 'appium-client', 'interactive']);
  });

  it("gives tests a small documented environment, without the agent's secrets", async () => {
    process.env.DEVICECLOUD_AGENT_TOKEN = 'dca_should_never_leak_000000000000';
    try {
      const spec = await serverSide(
        'env',
        `env | sort > "$OUTPUT_DIR/env.txt"\n${junit('<testcase classname="c" name="env"/>')}`,
      );
      const result = await driver.execute(
        job({ ...spec, parameters: { BASE_URL: 'https://staging', PATH: '/evil', 'bad-name': 'x' } }),
        recorder().context,
      );
      const env = fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'env.txt')!.path, 'utf8');
      for (const name of [
        'DEVICE_NAME=Google Pixel 8',
        'DEVICE_SERIAL=virtual-android-1',
        'DEVICE_OS=ANDROID',
        'DEVICE_OS_VERSION=14',
        'DEVICE_API_LEVEL=34',
        'APP_PACKAGE=com.devicecloud.sample',
        'BASE_URL=https://staging',
        'LOCALE=en_US',
      ]) {
        expect(env).toContain(name);
      }
      expect(env).toMatch(/^APP_PATH=.*com\.devicecloud\.sample$/m);
      expect(env).not.toContain('dca_should_never_leak');
      expect(env).not.toContain('/evil');
      expect(env).not.toContain('bad-name');
    } finally {
      delete process.env.DEVICECLOUD_AGENT_TOKEN;
      await driver.clean('virtual-android-1');
    }
  });

  it('caps the log of a script that floods its output, without hanging', async () => {
    const spec = await serverSide(
      'flood',
      `head -c ${LOG_LIMIT_BYTES + 5_000_000} /dev/zero | tr '\\0' 'x'\necho done >&2\n`,
    );
    const started = Date.now();
    const result = await driver.execute(job(spec), recorder().context);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.outcome).toBe('COMPLETED');
    const log = result.artifacts.find((artifact) => artifact.kind === 'log')!;
    expect(fs.statSync(log.path).size).toBeLessThan(LOG_LIMIT_BYTES + 1000);
    expect(fs.readFileSync(log.path, 'utf8').endsWith(`[log truncated after ${LOG_LIMIT_BYTES} bytes]\n`)).toBe(true);
  });

  it('kills everything the tests started on abort, even children that ignore SIGTERM', async () => {
    const marker = `stubborn-${process.pid}-${Date.now()}`;
    const spec = await serverSide(
      'stubborn',
      `bash -c 'trap "" TERM; while true; do sleep 0.2; done' ${marker} &\nwhile true; do sleep 0.2; done\n`,
    );
    const controller = new AbortController();
    const running = driver.execute(job(spec), recorder(controller.signal).context);
    await until(() => processesWith(marker).length > 0);
    controller.abort();
    const result = await running;
    expect(result.outcome).toBe('STOPPED');
    expect(processesWith(marker)).toEqual([]);
    await driver.clean('virtual-android-1');
  });

  it('stops, when cleaning, tests that a crashed agent left running on the device', async () => {
    const marker = `orphan-${process.pid}-${Date.now()}`;
    const spec = await serverSide('orphan', `bash -c 'while true; do sleep 0.2; done' ${marker}\n`);
    const orphaned = driver.execute(job(spec), recorder().context);
    await until(() => processesWith(marker).length > 0);
    // The agent that started them is gone; a new one, on the same data dir, cleans the device.
    const successor = createVirtualDriver({
      dataDir,
      devices: defaultVirtualDevices(2, 1),
      sandbox: testSandbox(dataDir),
    });
    const cleaned = await successor.clean('virtual-android-1');
    expect(cleaned).toMatchObject({
      ok: true,
      report: expect.stringContaining('stopped tests left running by a previous agent'),
    });
    expect(processesWith(marker)).toEqual([]);
    expect((await orphaned).exitCode).toBeNull();
    expect((await successor.clean('virtual-android-1')).report).not.toContain('previous agent');
  });

  it('samples the CPU and memory of the whole tree, including what `timeout` moves to its own group', async () => {
    expect(groupUsage(999_999_999)).toEqual({ ticks: 0, rssKb: 0, processes: 0 });
    const spec = await serverSide(
      'busy',
      `for i in 1 2; do (timeout 2.5 bash -c 'while :; do :; done' &) ; done; sleep 2.6\n${junit('<testcase classname="c" name="busy"/>')}`,
    );
    const { context, samples } = recorder();
    await driver.execute(job(spec), context);
    expect(samples.length).toBeGreaterThanOrEqual(1);
    // The busy loops are the tree's only CPU users (the script sleeps): a sample that counts
    // several ticks of CPU in its second counted them. How large a share they get is the machine's
    // to decide (with both cores loaded it fell below 0.3), so only their ticks are asserted.
    const ticksInASecond = Math.max(...samples.map((sample) => sample.cpuUsage)) * TICKS_PER_SECOND;
    expect(ticksInASecond).toBeGreaterThanOrEqual(5);
    expect(Math.max(...samples.map((sample) => sample.memUsage ?? 0))).toBeGreaterThan(1000);
    await driver.clean('virtual-android-1');
  });

  it('crawls every declared activity, each a test case with a screenshot', async () => {
    const result = await driver.execute(
      job({ kind: 'crawler', app, tests: null, credentials: { username: 'qa', password: 'secret' } }),
      recorder().context,
    );
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['sign in', 'PASSED'],
      ['launch com.devicecloud.sample.MainActivity', 'PASSED'],
      ['launch com.devicecloud.sample.SettingsActivity', 'PASSED'],
      ['launch com.devicecloud.sample.AboutActivity', 'PASSED'],
    ]);
    const shots = result.artifacts.filter((artifact) => artifact.kind === 'screenshot');
    expect(shots).toHaveLength(4);
    expect(fs.readFileSync(shots[1]!.path).subarray(1, 4).toString()).toBe('PNG');
    // Each screenshot is the phone's screen as it drew the visited screen: phone-sized, each its own.
    const images = shots.map((shot) => PNG.sync.read(fs.readFileSync(shot.path)));
    expect(images.map((image) => [image.width, image.height])).toEqual(Array(4).fill([320, 640]));
    expect(new Set(images.map((image) => image.data.toString('base64'))).size).toBe(4);
    await driver.clean('virtual-android-1');
  });

  it('says at start, and for each session, that ffmpeg is missing, and records no video without it', async () => {
    const lacking = createVirtualDriver({
      dataDir: fs.mkdtempSync(path.join(root, 'no-ffmpeg-')),
      devices: defaultVirtualDevices(1, 0),
      sandbox: testSandbox(dataDir),
      ffmpeg: '/nonexistent/ffmpeg',
    });
    expect(lacking.missingTools()).toEqual([
      '/nonexistent/ffmpeg is missing on this device host (Debian package ffmpeg): device sessions on virtual devices will have no video',
    ]);
    const video = await (await lacking.record('virtual-android-1', fs.mkdtempSync(path.join(root, 'v-')))).stop();
    expect(video).toEqual({ file: null, reason: expect.stringContaining('/nonexistent/ffmpeg is missing') });
    await lacking.close();
  });

  it('crawls iOS screens, and says when an app declares none', async () => {
    const ipaProps = (await inspectFile(examples['sample-app.ipa']!, 'sample-app.ipa')).properties;
    const ios = await driver.execute(
      job({
        serial: 'virtual-ios-1',
        kind: 'crawler',
        app: { path: examples['sample-app.ipa']!, name: 'sample-app.ipa', properties: ipaProps },
        tests: null,
      }),
      recorder().context,
    );
    expect(ios.testCases!.map((testCase) => testCase.methodName)).toEqual([
      'launch Home',
      'launch Settings',
      'launch About',
    ]);
    const empty = await driver.execute(
      job({ kind: 'crawler', app: { ...app, properties: { package_name: 'x' } }, tests: null }),
      recorder().context,
    );
    expect(empty).toMatchObject({
      outcome: 'COMPLETED',
      testCases: [],
      failReason: 'the app declares no activities to crawl',
    });
  });

  it('applies the device settings a run asks for, and cleaning (full or light) puts them back', async () => {
    const seen = async (deviceSettings: Job['deviceSettings']) => {
      const spec = await serverSide(
        'settings',
        `echo "$DEVICE_LOCALE $DEVICE_WIFI $DEVICE_GOOGLE_ACCOUNT" > "$OUTPUT_DIR/settings.txt"\n${junit('<testcase classname="c" name="s"/>')}`,
      );
      const result = await driver.execute(job({ ...spec, deviceSettings }), recorder().context);
      return fs
        .readFileSync(result.artifacts.find((artifact) => artifact.name === 'settings.txt')!.path, 'utf8')
        .trim();
    };
    const probe = () =>
      seen({ locale: 'fi_FI', wifi: false, googleAccount: { email: 'qa@example.com', password: 'pw' } });
    const plain = () => seen(null);
    expect(await probe()).toBe('fi_FI off qa@example.com');
    expect(await plain()).toBe('fi_FI off qa@example.com');
    const storage = path.join(dataDir, 'devices', 'virtual-android-1', 'storage');
    const boots = () =>
      Number(fs.readFileSync(path.join(dataDir, 'devices', 'virtual-android-1', 'boot-count'), 'utf8'));
    await driver.clean('virtual-android-1');
    const bootsBefore = boots();
    expect(await plain()).toBe('en_US on');

    expect(await probe()).toBe('fi_FI off qa@example.com');
    // A run's files in the device's storage: on the public cloud the next run is a stranger's.
    fs.writeFileSync(path.join(storage, 'left-by-the-last-tenant.txt'), 'private');
    const light = await driver.clean('virtual-android-1', 'LIGHT');
    expect(light).toMatchObject({ ok: true, report: expect.stringContaining('restored device settings') });
    expect(await plain()).toBe('en_US on');
    expect(fs.readdirSync(storage)).toEqual([]);
    expect(boots()).toBe(bootsBefore);
    await driver.clean('virtual-android-1', 'FULL');
    expect(boots()).toBe(bootsBefore + 1);
  });

  it('reports failed cleaning and an offline device through its test hooks', async () => {
    const device = path.join(dataDir, 'devices', 'virtual-android-2');
    fs.writeFileSync(path.join(device, 'fail-cleaning'), '');
    expect(await driver.clean('virtual-android-2')).toMatchObject({
      ok: false,
      report: expect.stringContaining('fail-cleaning'),
    });
    fs.writeFileSync(path.join(device, 'offline'), '');
    expect(await driver.health('virtual-android-2')).toMatchObject({ ok: false });
  });
});
