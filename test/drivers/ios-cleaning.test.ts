/**
 * The iOS driver cleaning back to the baseline, and the device settings it applies or refuses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAB_TOOL, WDA_BUNDLE } from '../support/fake-ios/index.ts';
import { recorder } from './conformance.ts';
import {
  APP_ID,
  PHONE_1,
  PHONE_2,
  RUNNER_ID,
  app,
  called,
  job,
  restartedDriver,
  world,
  xcuitest,
  iosFiles,
} from './ios-world.ts';

iosFiles();

describe('ios driver: cleaning and device settings', () => {
  it('removes what runs installed, keeps the baseline, restores the region, reboots, and checks', async () => {
    const w = world();
    await w.driver.listDevices();
    const baselineFile = path.join(w.dataDir, 'devices', PHONE_1, 'baseline.json');
    expect(JSON.parse(fs.readFileSync(baselineFile, 'utf8'))).toMatchObject({
      apps: [LAB_TOOL, WDA_BUNDLE],
      language: { language: 'en', locale: 'en_US' },
    });
    // Installed after the agent first saw the phone: not part of its baseline.
    w.fake.updateDevice(PHONE_1, (device) => {
      device.apps['com.example.leftover'] = { info: { CFBundleIdentifier: 'com.example.leftover' }, path: '/x' };
    });
    const run = await w.driver.execute(
      job({ ...(await xcuitest('passing')), deviceSettings: { locale: 'fi_FI', wifi: null, googleAccount: null } }),
      recorder().context,
    );
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
    expect(cleaned).toEqual({
      ok: true,
      report: `removed 2 app(s) (${APP_ID}, ${RUNNER_ID}), no reboot (light cleaning), verified`,
    });
    expect(w.fake.device(PHONE_1).containers[APP_ID]).toBeUndefined();
    expect(called(w.fake, 'reboot')).toEqual([]);
  });

  it("fails cleaning, with go-ios' reason, when the phone does not reboot", async () => {
    const w = world();
    w.fake.updateDevice(PHONE_2, (device) => {
      device.failReboot = true;
    });
    const cleaned = await w.driver.clean(PHONE_2);
    expect(cleaned.ok).toBe(false);
    expect(cleaned.report).toMatch(
      /^ios reboot --udid=\S+ failed: reboot failed: diagnostics_relay: Restart request was not accepted \(after: no apps to remove\)$/,
    );
  });

  it('fails cleaning when the phone does not come back in time', async () => {
    const w = world({ driver: { bootTimeoutMs: 1000 } });
    w.fake.update((state) => {
      state.rebootMs = 60_000;
    });
    const cleaned = await w.driver.clean(PHONE_2);
    expect(cleaned).toEqual({
      ok: false,
      report: 'the device did not come back within 1 s of the reboot (after: no apps to remove)',
    });
  });

  it('refuses Wi-Fi and Google account settings by name, before touching the phone', async () => {
    const w = world();
    w.fake.clearCalls();
    const wifi = await w.driver.execute(
      job({
        kind: 'crawler',
        app: await app(),
        tests: null,
        deviceSettings: { locale: null, wifi: false, googleAccount: null },
      }),
      recorder().context,
    );
    expect(wifi).toMatchObject({ outcome: 'INFRA_ERROR', failReason: expect.stringMatching(/switch Wi-Fi off/) });
    const google = await w.driver.execute(
      job({
        kind: 'crawler',
        app: await app(),
        tests: null,
        deviceSettings: { locale: 'fi_FI', wifi: null, googleAccount: { email: 'qa@example.com', password: 'x' } },
      }),
      recorder().context,
    );
    expect(google.failReason).toMatch(/Google account/);
    expect(w.fake.calls()).toEqual([]);
  });
});
