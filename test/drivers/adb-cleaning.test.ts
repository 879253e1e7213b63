/**
 * The adb driver cleaning a phone back to its baseline, FULL and LIGHT, and failing when it cannot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { recorder } from './conformance.ts';
import { root, instrumentation, driverFor, adbBench, PIXEL, LAB_ACCOUNT, adbFiles } from './adb-world.ts';

adbFiles();

describe('adb driver', () => {
  const { bench, job } = adbBench();

  it('cleans: uninstalls what is new, clears the browser, deletes files, reboots, waits for boot, verifies', async () => {
    const pixel = bench.fake.device(PIXEL);
    await bench.driver.execute(job(instrumentation('trace')), recorder().context);
    expect(pixel.below('/sdcard/Download')).toContain('/sdcard/Download/left-behind.txt');
    const boots = pixel.boots;
    const cleaned = await bench.driver.clean(PIXEL);
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
    const pixel = bench.fake.device(PIXEL);
    await bench.driver.execute(job(instrumentation('trace')), recorder().context);
    // The tests signed an account in themselves: not a setting of the run's, but not the phone's either.
    pixel.accounts.push({ name: 'tests.own@gmail.com', type: 'com.google' });
    const boots = pixel.boots;
    const light = await bench.driver.clean(PIXEL, 'LIGHT');
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
    const pixel = bench.fake.device(PIXEL);
    // A device-admin app, say: it refuses to be uninstalled.
    pixel.packages.set('com.example.admin', { system: true, activities: [], exported: [], instrumentation: null });
    const stuck = await bench.driver.clean(PIXEL);
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
    const pixel = bench.fake.device(PIXEL);
    await bench.driver.execute(job(instrumentation('sample')), recorder().context);
    const successor = driverFor(bench.fake, bench.dataDir);
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
