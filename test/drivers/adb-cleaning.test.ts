/**
 * The adb driver cleaning a phone back to its baseline, FULL and LIGHT, and failing when it cannot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, Job } from '../../src/agent/driver.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { type JobSpec, recorder } from './conformance.ts';
import { root, instrumentation, driverFor } from './adb-world.ts';

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
    fake = await FakeAdbServer.start([
      { serial: PIXEL, accounts: [LAB_ACCOUNT] },
      { serial: MOTO, model: 'moto-g5' },
    ]);
    dataDir = fs.mkdtempSync(path.join(root, 'driver-'));
    driver = driverFor(fake, dataDir, {}, logs);
    await driver.listDevices(); // first sight: the baselines are recorded
  });
  afterAll(async () => {
    await driver.close();
    await fake.close();
  });

  const job = (spec: JobSpec & Partial<Job>): Job => {
    jobs += 1;
    const workDir = path.join(dataDir, 'work', String(jobs));
    fs.mkdirSync(workDir, { recursive: true });
    return {
      deviceRunId: jobs,
      serial: PIXEL,
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
  it('cleans: uninstalls what is new, clears the browser, deletes files, reboots, waits for boot, verifies', async () => {
    const pixel = fake.device(PIXEL);
    await driver.execute(job(instrumentation('trace')), recorder().context);
    expect(pixel.below('/sdcard/Download')).toContain('/sdcard/Download/left-behind.txt');
    const boots = pixel.boots;
    const cleaned = await driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toMatch(
      /^uninstalled 2 package\(s\) \(com\.devicecloud\.sample, com\.devicecloud\.trace\.test\), cleared com\.android\.chrome, deleted 2 file\(s\) and folder\(s\) left in storage, turned Wi-Fi on, rebooted; verified against the baseline of /,
    );
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
      expect(report).toMatchObject({
        ok: false,
        report: expect.stringContaining(
          'the phone did not finish booting within 2 s (sys.boot_completed never became 1)',
        ),
      });
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
});
