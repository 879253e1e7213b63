/**
 * The adb driver running tests on a phone of the fake ADB server: instrumentation, crashes, refused
 * installs, samples, the crawler, a phone unplugged mid-run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { testApk } from '../support/fake-adb/apks.ts';
import { recorder } from './conformance.ts';
import { root, app, apks, instrumentation, adbBench, PIXEL, MOTO, adbFiles } from './adb-world.ts';

adbFiles();

describe('adb driver', () => {
  const { bench, job, until } = adbBench();

  it('runs instrumentation end to end: installs, passes parameters, reads failures, screenshots them, captures logcat', async () => {
    const pixel = bench.fake.device(PIXEL);
    const { context, steps } = recorder();
    const result = await bench.driver.execute(
      job({ ...instrumentation('failing'), parameters: { size: 'medium', 'not an argument': 'x' } }),
      context,
    );
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => `${testCase.methodName}:${testCase.result}`)).toEqual([
      'testValidLogin:PASSED',
      'testAddToCart:PASSED',
      'testPayWithExpiredCard:FAILED',
      'testPayWithNfc:SKIPPED',
      'testPayLater:SKIPPED',
    ]);
    expect(steps).toEqual(['PREPARING', 'INSTALL', 'RUNNING']);
    expect(pixel.commands).toContain(
      "'am' 'instrument' '-r' '-w' '-e' 'size' 'medium' 'com.devicecloud.failing.test/androidx.test.runner.AndroidJUnitRunner'",
    );
    expect(
      pixel.commands.filter((command) => command.startsWith("'pm' 'install' '-r' '-t' '-g' '/data/local/tmp/")),
    ).toHaveLength(2);
    const shots = result.artifacts.filter((artifact) => artifact.kind === 'screenshot');
    expect(shots.map((shot) => shot.name)).toEqual(['01-failed-testPayWithExpiredCard.png', '02-final.png']);
    expect(PNG.sync.read(fs.readFileSync(shots[0]!.path)).width).toBe(36);
    const logcat = result.artifacts.find((artifact) => artifact.name === 'logcat.txt')!;
    expect(fs.readFileSync(logcat.path, 'utf8')).toContain('Start proc');
    expect(pixel.running.has('com.devicecloud.sample')).toBe(false);
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it('fails the test an app crash took down, with the stack trace from logcat', async () => {
    const result = await bench.driver.execute(job(instrumentation('crash')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    const crashed = result.testCases!.find((testCase) => testCase.result === 'FAILED')!;
    expect(crashed).toMatchObject({
      methodName: 'testOpenReceipt',
      errorMessage: 'the app crashed: java.lang.IllegalStateException: receipt must not be null',
    });
    expect(crashed.stacktrace).toContain('at com.devicecloud.sample.ReceiptActivity.onCreate(ReceiptActivity.java:42)');
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it('refuses an app the phone will not install as a failed run, and a missing runner likewise', async () => {
    const broken = path.join(root, 'broken.apk');
    fs.writeFileSync(broken, 'not a zip');
    const refused = await bench.driver.execute(
      job({
        kind: 'instrumentation',
        app: { path: broken, name: 'broken.apk', properties: { package_name: 'x' } },
        tests: apks.get('sample')!,
      }),
      recorder().context,
    );
    expect(refused).toMatchObject({
      outcome: 'COMPLETED',
      testCases: [],
      failReason: expect.stringMatching(/^broken\.apk could not be installed: Failure \[INSTALL_PARSE_FAILED_NOT_APK/),
    });
    const unknown = await testApk(root, 'com.devicecloud.unknown.test');
    const noRunner = await bench.driver.execute(
      job({ kind: 'instrumentation', app, tests: unknown }),
      recorder().context,
    );
    expect(noRunner).toMatchObject({
      outcome: 'COMPLETED',
      testCases: [],
      failReason: expect.stringContaining('Unable to find instrumentation info'),
    });
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it("samples the app's CPU and memory every second, on toybox and toolbox top alike", async () => {
    for (const serial of [PIXEL, MOTO]) {
      const { context, samples } = recorder();
      const result = await bench.driver.execute(job({ ...instrumentation('sample'), serial }), context);
      expect(result.outcome).toBe('COMPLETED');
      expect(samples.length).toBeGreaterThanOrEqual(1);
      // 25% of one of eight cores on the Pixel; 6% of the whole phone on the Moto.
      expect(samples[0]).toMatchObject({
        cpuUsage: serial === PIXEL ? 0.031 : 0.06,
        packageName: 'com.devicecloud.sample',
        memUsage: expect.any(Number),
      });
      expect(samples[0]!.memUsage).toBeGreaterThan(40_000);
      expect((await bench.driver.clean(serial)).ok).toBe(true);
    }
    expect(bench.fake.device(MOTO).commands).toContain("'top' '-n' '1'");
    expect(bench.fake.device(PIXEL).commands.some((command) => command.startsWith("'top' '-b' '-n' '1' '-p'"))).toBe(
      true,
    );
  });

  it('crawls each exported activity, then the monkey, catching crashes from logcat', async () => {
    const pixel = bench.fake.device(PIXEL);
    pixel.crashingActivities.add('com.devicecloud.sample.SettingsActivity');
    try {
      const result = await bench.driver.execute(
        job({ kind: 'crawler', app, tests: null, credentials: { username: 'qa', password: 'x' } }),
        recorder().context,
      );
      expect(result.outcome).toBe('COMPLETED');
      expect(
        result.testCases!.map((testCase) => [testCase.methodName, testCase.result, testCase.errorMessage]),
      ).toEqual([
        ['launch com.devicecloud.sample.MainActivity', 'PASSED', null],
        [
          'launch com.devicecloud.sample.SettingsActivity',
          'FAILED',
          'the app crashed: java.lang.IllegalStateException: receipt must not be null',
        ],
        [`monkey 40 events (seed ${bench.jobs})`, 'PASSED', null],
      ]);
      expect(result.testCases![1]!.stacktrace).toContain('ReceiptActivity.onCreate');
      expect(
        result.artifacts.filter((artifact) => artifact.kind === 'screenshot').map((artifact) => artifact.name),
      ).toEqual(['01-MainActivity.png', '02-SettingsActivity.png', '03-monkey.png']);
      const crawlerLog = fs.readFileSync(
        result.artifacts.find((artifact) => artifact.name === 'crawler.log')!.path,
        'utf8',
      );
      expect(crawlerLog).toContain('the crawler does not fill in forms');
      expect(pixel.commands).toContain(
        `'monkey' '-p' 'com.devicecloud.sample' '-s' '${bench.jobs}' '--throttle' '10' '--pct-syskeys' '0' '-v' '40'`,
      );
    } finally {
      pixel.crashingActivities.clear();
    }
    pixel.monkeyCrashes = true;
    try {
      const result = await bench.driver.execute(job({ kind: 'crawler', app, tests: null }), recorder().context);
      expect(result.testCases!.at(-1)).toMatchObject({
        result: 'FAILED',
        errorMessage: 'the app crashed: java.lang.IllegalStateException: receipt must not be null',
      });
    } finally {
      pixel.monkeyCrashes = false;
    }
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it('ends a run as an infrastructure error when the phone is unplugged in the middle', async () => {
    const running = bench.driver.execute(job(instrumentation('endless')), recorder().context);
    await until(() => bench.fake.device(PIXEL).running.has('com.devicecloud.sample'));
    const pixel = bench.fake.device(PIXEL);
    bench.fake.unplug(PIXEL);
    const result = await running;
    expect(result).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringContaining('went away') });
    bench.fake.devices.set(PIXEL, pixel);
    bench.fake.setState(PIXEL, 'device');
    await until(async () => (await bench.driver.health(PIXEL)).ok);
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });
});
