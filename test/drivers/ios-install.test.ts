/**
 * The iOS driver installing builds: re-signing with the service's profile, refused builds,
 * signers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Signer } from '../../src/agent/drivers/ios/signer.ts';
import { decide } from '../../src/agent/executor.ts';
import { ipa } from '../support/fake-ios/index.ts';
import { recorder } from './conformance.ts';
import {
  APP_ID,
  PHONE_1,
  PHONE_2,
  RUNNER_ID,
  type World,
  app,
  called,
  file,
  job,
  restartedDriver,
  runner,
  world,
  xcuitest,
  iosFiles,
} from './ios-world.ts';

iosFiles();

describe('ios driver: installing builds', () => {
  let w: World;
  beforeAll(async () => {
    w = world();
    await w.driver.listDevices();
  });

  it('lists the phones by model and iOS version, for XCTest, XCUITest, the crawler and interactive sessions', async () => {
    expect(
      (await w.driver.listDevices()).map((device) => [
        device.serial,
        device.displayName,
        device.releaseVersion,
        device.osType,
        device.apiLevel,
      ]),
    ).toEqual([
      [PHONE_1, 'Apple iPhone 15', '17.4.1', 'IOS', null],
      [PHONE_2, 'Apple iPhone 13', '16.7.8', 'IOS', null],
    ]);
    expect((await w.driver.listDevices())[0]!.executionKinds).toEqual(['xctest', 'xcuitest', 'crawler', 'interactive']);
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
    expect(installs.map(([args]) => args[1])).toEqual([
      signs[0]![5]!.replace('--output=', '--path='),
      signs[1]![5]!.replace('--output=', '--path='),
    ]);
    expect(calls.indexOf(signs[1]!)).toBeLessThan(installs[1]![1]);
    const installed = w.fake.device(PHONE_1).apps;
    expect(installed[APP_ID]).toMatchObject({
      signedBy: 'signed by fake go-ios with identity.p12',
      profile: 'devicecloud lab',
    });
    expect(installed[RUNNER_ID]).toMatchObject({ profile: 'devicecloud lab' });
    expect((await w.driver.clean(PHONE_1)).ok).toBe(true);
  });

  it('refuses App Store, enterprise and simulator builds with the reason, before signing anything', async () => {
    w.fake.clearCalls();
    const appStore = await file('store.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'app-store' }));
    const result = await w.driver.execute(
      job({ kind: 'xcuitest', app: appStore, tests: await runner('passing') }),
      recorder().context,
    );
    expect(result).toMatchObject({
      outcome: 'COMPLETED',
      testCases: [],
      failReason: expect.stringMatching(
        /^store\.ipa is an app-store distribution build .*upload an ad-hoc or development build$/,
      ),
    });
    const inHouse = await file('inhouse.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'enterprise' }));
    expect(
      (await w.driver.execute(job({ kind: 'crawler', app: inHouse, tests: null }), recorder().context)).failReason,
    ).toMatch(/^inhouse\.ipa is an enterprise distribution build/);
    // The executor makes that a failed run, not a retried infrastructure problem.
    expect(decide(result, { cases: [], problem: null }, null)).toMatchObject({
      outcome: 'FAILED',
      failReason: result.failReason,
    });
    const simulator = await file('sim.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', simulator: true }));
    expect(
      (await w.driver.execute(job({ kind: 'crawler', app: simulator, tests: null }), recorder().context)).failReason,
    ).toMatch(/simulator build/);
    const bare = await file('bare.ipa', ipa({ bundleId: APP_ID, executable: 'Sample', profile: 'none' }));
    expect(
      (await w.driver.execute(job({ kind: 'crawler', app: bare, tests: null }), recorder().context)).failReason,
    ).toMatch(/no embedded provisioning profile/);
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
    const result = await other.driver.execute(
      job({ kind: 'crawler', app: await app(), tests: null }),
      recorder().context,
    );
    expect(result).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason: "re-signing Sample.app with lazy signer left another provisioning profile in it, not the service's",
    });
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
    const result = await restartedDriver(wrong).execute(
      job({ kind: 'crawler', app: await app(), tests: null }),
      recorder().context,
    );
    expect(result).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason: expect.stringMatching(
        /^re-signing Sample\.app failed: ios sign app .* failed: failed signing app: .*decryption password incorrect$/,
      ),
    });
    // Users see fail reasons: the password is not in it.
    expect(result.failReason).toContain('--p12password=… ');
    expect(result.failReason).not.toContain('wrong');
  });
});
