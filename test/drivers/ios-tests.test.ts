/**
 * The iOS driver running XCTest and XCUITest bundles: results, parameters, recordings, crashes.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { xctestZip } from '../support/fake-ios/index.ts';
import { recorder } from './conformance.ts';
import { APP_ID, PHONE_1, type World, app, called, file, job, world, xcuitest, iosFiles } from './ios-world.ts';

iosFiles();

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
    await w.driver.execute(
      job({
        ...(await xcuitest('passing')),
        parameters: { BASE_URL: 'https://staging.example.com', 'bad-name': 'x', QUERY: 'a=b' },
      }),
      recorder().context,
    );
    const runtest = called(w.fake, 'runtest')[0]!;
    expect(runtest.filter((arg) => arg.startsWith('--env='))).toEqual(['--env=BASE_URL=https://staging.example.com']);
    await w.driver.clean(PHONE_1);
  });

  it('records the device log, CPU samples, the test log, XCTest screenshots and the last screen', async () => {
    const { context, samples } = recorder();
    const result = await w.driver.execute(job(await xcuitest('passing')), context);
    const byName = new Map(result.artifacts.map((artifact) => [artifact.name, artifact]));
    expect([...byName.keys()].sort()).toEqual([
      '01-Checkout_screen.png',
      'device.log',
      'final.png',
      'go-ios.log',
      'xctest.log',
    ]);
    expect(byName.get('01-Checkout_screen.png')!.kind).toBe('screenshot');
    expect(fs.readFileSync(byName.get('01-Checkout_screen.png')!.path).subarray(1, 4).toString()).toBe('PNG');
    expect(fs.readFileSync(byName.get('device.log')!.path, 'utf8')).toContain(
      `Now tracking process: [app<${APP_ID}((null))>:1212]`,
    );
    expect(fs.readFileSync(byName.get('xctest.log')!.path, 'utf8')).toContain(
      "Test Case '-[CheckoutUITests testPayWithValidCard]' passed (0.598 seconds).",
    );
    expect(samples.length).toBeGreaterThan(0);
    expect(samples[0]).toEqual({
      timestamp: expect.any(Number),
      cpuUsage: 62.5 / 600,
      memUsage: null,
      packageName: null,
    });
    await w.driver.clean(PHONE_1);
  });

  it('tells a crash from a failure: the unfinished test names the crash report, which is attached', async () => {
    const result = await w.driver.execute(job(await xcuitest('crash')), recorder().context);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['testBrowseCatalogue', 'PASSED'],
      ['testOpenBrokenScreen', 'FAILED'],
    ]);
    expect(result.testCases![1]!.errorMessage).toMatch(
      /did not finish.*; the app crashed \(Sample-2026-01-01-120002\.ips\)$/,
    );
    const report = result.artifacts.find((artifact) => artifact.name === 'crash-Sample-2026-01-01-120002.ips')!;
    expect(fs.readFileSync(report.path, 'utf8')).toContain('EXC_CRASH (SIGABRT)');
    await w.driver.clean(PHONE_1);
  });

  it('reports why tests could not run when the developer disk image is missing', async () => {
    w.fake.updateDevice(PHONE_1, (device) => {
      device.ddiMounted = false;
    });
    const result = await w.driver.execute(job(await xcuitest('passing')), recorder().context);
    expect(result).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason: expect.stringMatching(
        /^the tests could not be run: Failed running Xcuitest: failed connecting to com\.apple\.testmanagerd/,
      ),
    });
    const cleaned = await w.driver.clean(PHONE_1);
    expect(cleaned.report).toContain('mounted the developer disk image');
    expect(w.fake.device(PHONE_1).ddiMounted).toBe(true);
  });
});
