/**
 * The iOS driver's health checks and the checks at agent start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noSandbox } from '../../src/agent/drivers/host/sandbox.ts';
import { createDriver } from '../../src/agent/drivers/index.ts';
import { iosDriverFromSettings } from '../../src/agent/drivers/ios/index.ts';
import { findGoIos } from '../../src/agent/drivers/ios/setup.ts';
import { ConfigError } from '../../src/config.ts';
import { FAKE_IOS, FAKE_ZSIGN, provisioningProfile, signingFolder } from '../support/fake-ios/index.ts';
import { until } from '../support/until.ts';
import { PHONE_1, PHONE_2, root, world, iosFiles } from './ios-world.ts';

iosFiles();

describe('ios driver: health and start-up checks', () => {
  it('calls a phone unhealthy when go-ios does not see it or the service profile leaves it out', async () => {
    const w = world({ profileDevices: [PHONE_1] });
    expect(await w.driver.health(PHONE_1)).toEqual({ ok: true });
    expect(await w.driver.health(PHONE_2)).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /profile "devicecloud lab" does not include this device \(00008101-000C0D0E0F101112\)/,
      ),
    });
    w.fake.updateDevice(PHONE_1, (device) => {
      device.offlineUntil = Date.now() + 3_600_000;
    });
    // The driver lists the phones anew once its short-lived list is stale: wait for that, not for its age.
    expect(
      await until(
        () => w.driver.health(PHONE_1),
        (health) => !health.ok,
        20_000,
      ),
    ).toEqual({ ok: false, reason: 'go-ios does not see the device: unplugged, not trusted, or usbmuxd stopped' });
  });

  it('lists the phones that answer when one does not trust the host yet', async () => {
    const w = world();
    w.fake.updateDevice(PHONE_2, (device) => {
      device.untrusted = true;
    });
    expect(
      (await w.driver.listDevices()).map((device) => [device.serial, device.displayName, device.releaseVersion]),
    ).toEqual([[PHONE_1, 'Apple iPhone 15', '17.4.1']]);
    expect(w.fake.calls().map((args) => args.join(' '))).toEqual(
      expect.arrayContaining(['list --details', 'list', `info --udid=${PHONE_1}`, `info --udid=${PHONE_2}`]),
    );
    // go-ios 1.2.0 panics listing the apps of a phone that is not paired (recorded).
    expect(await w.driver.clean(PHONE_2)).toEqual({
      ok: false,
      report: `ios apps --udid=${PHONE_2} failed: go-ios crashed: panic: runtime error: invalid memory address or nil pointer dereference`,
    });
  });

  it("says usbmuxd is missing when go-ios cannot list devices (go-ios 1.2.0's own words)", async () => {
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
    expect(() => iosDriverFromSettings({ dataDir, binary: '/nowhere/ios', signingDir: signing })).toThrow(
      /^--ios-bin \/nowhere\/ios is not an executable file; install go-ios/,
    );
    expect(() => findGoIos(undefined, { PATH: '/nowhere' })).toThrow(
      /^go-ios was not found: install go-ios on this host/,
    );
    const onPath = path.join(root, 'bin');
    fs.mkdirSync(onPath, { recursive: true });
    fs.copyFileSync(FAKE_IOS, path.join(onPath, 'ios'));
    fs.chmodSync(path.join(onPath, 'ios'), 0o755);
    expect(findGoIos(undefined, { PATH: `/nowhere:${onPath}` })).toBe(path.join(onPath, 'ios'));
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS })).toThrow(
      /^no signing folder was given: --ios-signing/,
    );
    const adhoc = signingFolder(path.join(root, 'adhoc-signing'), { profile: provisioningProfile('ad-hoc') });
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: adhoc })).toThrow(
      /is an ad-hoc profile; the service needs a development profile \(get-task-allow\)/,
    );
    const expired = signingFolder(path.join(root, 'expired-signing'), {
      profile: provisioningProfile('development', { name: 'old', expires: new Date(Date.UTC(2020, 0, 1)) }),
    });
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: expired })).toThrow(
      /\("old"\) expired on 2020-01-01/,
    );
    fs.rmSync(path.join(signing, 'identity.p12'));
    expect(() => iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: signing })).toThrow(
      /has no identity\.p12/,
    );
    const good = signingFolder(path.join(root, 'good-signing'));
    expect(iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: good, signer: FAKE_ZSIGN }).name).toBe('ios');
    expect(() =>
      iosDriverFromSettings({ dataDir, binary: FAKE_IOS, signingDir: good, signer: '/nowhere/zsign' }),
    ).toThrow('--ios-signer /nowhere/zsign is neither go-ios nor an executable zsign');
    // Through `--driver ios`, the same problems are configuration errors (exit code 3, one line).
    const start = () =>
      createDriver('ios', {
        dataDir,
        virtualDevices: 0,
        ios: { binary: '/nowhere/ios', signingDir: good },
        sandbox: noSandbox(),
      });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/^The ios driver cannot start: --ios-bin \/nowhere\/ios is not an executable file/);
  });
});
