/**
 * What the iOS driver tests (test/drivers/ios*.test.ts) share: builds made on the fly, a world of
 * its own per test (fake go-ios phones, a signing folder, a driver), and jobs in their own folders.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { type IosDriverOptions, createIosDriver } from '../../src/agent/drivers/ios/index.ts';
import { GoIos } from '../../src/agent/drivers/ios/go-ios.ts';
import { type Signer, goIosSigner, loadSigningSetup, zsignSigner } from '../../src/agent/drivers/ios/signer.ts';
import {
  FAKE_IOS,
  FAKE_ZSIGN,
  FakeIos,
  LAB_DEVICES,
  ipa,
  provisioningProfile,
  runnerZip,
  signingFolder,
} from '../support/fake-ios/index.ts';
import type { DriverFixtures, JobSpec } from './conformance.ts';

export let root: string;

/**
 * The calling file's folder, made and removed by its hooks. The hooks are the file's, not this
 * module's: files share a worker's modules (vitest.config.ts), so hooks registered when this module
 * loaded would belong to the first file that imported it only.
 */
export function iosFiles(): void {
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-ios-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
}

export const APP_ID = 'com.devicecloud.sample';
export const RUNNER_ID = 'com.devicecloud.sample.SampleUITests.xctrunner';
export const [PHONE_1, PHONE_2] = LAB_DEVICES.map((device) => device.udid) as [string, string];

export async function file(name: string, content: Buffer | Promise<Buffer>): Promise<LocalFile> {
  const target = path.join(root, 'uploads', name);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, await content);
  return { path: target, name, properties: {} };
}

export const app = () =>
  file(
    'sample-app.ipa',
    ipa({ bundleId: APP_ID, executable: 'Sample', displayName: 'Sample Shop', screens: ['Home', 'Settings', 'About'] }),
  );
export const runner = (scenario: string) =>
  file(`${scenario}-runner.zip`, runnerZip({ bundleId: RUNNER_ID, xctest: 'SampleUITests.xctest', scenario }));
export const xcuitest = async (scenario: string): Promise<JobSpec> => ({
  kind: 'xcuitest',
  app: await app(),
  tests: await runner(scenario),
});

export const fixtures: DriverFixtures = {
  passing: () => xcuitest('passing'),
  failing: () => xcuitest('failing'),
  endless: () => xcuitest('endless'),
  leavesTrace: () => xcuitest('trace'),
  expectsClean: () => xcuitest('check-clean'),
  unsupportedKind: 'instrumentation',
};

export interface World {
  readonly driver: Driver;
  readonly fake: FakeIos;
  readonly dataDir: string;
  readonly signingDir: string;
}

let worlds = 0;
export function world(
  options: {
    signer?: 'go-ios' | 'zsign' | Signer;
    password?: string;
    profileDevices?: readonly string[];
    driver?: Partial<IosDriverOptions>;
  } = {},
): World {
  const dir = path.join(root, `world-${++worlds}`);
  const fake = new FakeIos(path.join(dir, 'fake'));
  const signingDir = signingFolder(path.join(dir, 'signing'), {
    password: options.password,
    profile: provisioningProfile('development', { name: 'devicecloud lab', devices: options.profileDevices }),
  });
  const signing = loadSigningSetup(signingDir);
  const goIos = new GoIos(FAKE_IOS, fake.env);
  const signer =
    options.signer === 'zsign'
      ? zsignSigner(FAKE_ZSIGN, signing, fake.env)
      : options.signer === undefined || options.signer === 'go-ios'
        ? goIosSigner(goIos, signing)
        : options.signer;
  const dataDir = path.join(dir, 'agent');
  const driver = createIosDriver({
    dataDir,
    goIos,
    signing,
    signer,
    pollMs: 100,
    bootTimeoutMs: 10_000,
    crawlLimits: { maxTaps: 30, maxScreens: 10, settleMs: 50 },
    ...options.driver,
  });
  return { driver, fake, dataDir, signingDir };
}

/** Another driver on the same phones, data dir and signing folder, as after an agent restart. */
export function restartedDriver(w: World): Driver {
  const goIos = new GoIos(FAKE_IOS, w.fake.env);
  const signing = loadSigningSetup(w.signingDir);
  return createIosDriver({ dataDir: w.dataDir, goIos, signing, signer: goIosSigner(goIos, signing), pollMs: 100 });
}

let runs = 0;
export function job(spec: JobSpec & Partial<Job>, serial = PHONE_1): Job {
  const workDir = path.join(root, 'work', String(++runs));
  fs.mkdirSync(workDir, { recursive: true });
  return {
    deviceRunId: runs,
    serial,
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
}

export const called = (fake: FakeIos, command: string) => fake.calls().filter((args) => args[0] === command);
