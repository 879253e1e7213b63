/**
 * The iOS driver's crawler through WebDriverAgent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WDA_BUNDLE, ipa } from '../support/fake-ios/index.ts';
import { until } from '../support/until.ts';
import { recorder } from './conformance.ts';
import { APP_ID, PHONE_1, app, called, file, job, world, iosFiles } from './ios-world.ts';

iosFiles();

describe('ios driver: the crawler', () => {
  it('explores the app through its accessibility tree: signs in, screenshots each screen, catches a crash, comes back', async () => {
    const w = world();
    const shop = await file(
      'shop.ipa',
      ipa({
        bundleId: APP_ID,
        executable: 'Sample',
        displayName: 'Sample Shop',
        screens: ['Home', 'Settings', 'Checkout', 'About'],
        signIn: true,
        crashOnScreen: 'Checkout',
      }),
    );
    const result = await w.driver.execute(
      job({ kind: 'crawler', app: shop, tests: null, credentials: { username: 'qa', password: 'secret' } }),
      recorder().context,
    );
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => [testCase.methodName, testCase.result])).toEqual([
      ['sign in', 'PASSED'],
      ['launch (Home)', 'PASSED'],
      ['screen: Settings', 'PASSED'],
      ['crash after tapping "Checkout" on "Home"', 'FAILED'],
      ['screen: About', 'PASSED'],
    ]);
    expect(result.testCases![3]!.errorMessage).toBe(
      'the app crashed after tapping "Checkout" on "Home" (Sample-2026-01-01-120000.ips)',
    );
    expect(
      result.artifacts.filter((artifact) => artifact.kind === 'screenshot').map((artifact) => artifact.name),
    ).toEqual(['01-Home.png', '02-Settings.png', '03-About.png']);
    expect(result.artifacts.some((artifact) => artifact.name === 'crash-Sample-2026-01-01-120000.ips')).toBe(true);
    expect(
      fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'crawler.log')!.path, 'utf8'),
    ).toContain('tapping "Settings" on "Home"');
    // WebDriverAgent was started through go-ios and is gone again.
    expect(called(w.fake, 'runwda')).toEqual([['runwda', `--udid=${PHONE_1}`]]);
    expect(called(w.fake, 'forward')[0]).toEqual([
      'forward',
      expect.stringMatching(/^\d+$/),
      '8100',
      `--udid=${PHONE_1}`,
    ]);
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
    await until(
      () => ({
        wda: w.fake.device(PHONE_1).wdaPort,
        running: steps.includes('RUNNING'),
        shots: fs.existsSync(shots) ? fs.readdirSync(shots).length : 0,
      }),
      (seen) => seen.wda !== null && seen.running && seen.shots > 0,
      20_000,
    );
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
    expect(result).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason:
        'the crawler could not drive the device: go-ios could not start WebDriverAgent: Failed running WDA: app com.facebook.WebDriverAgentRunner.xctrunner not installed',
    });
  });
});
