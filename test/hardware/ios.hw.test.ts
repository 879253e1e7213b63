/**
 * The driver conformance cases on a real iPhone, through go-ios. Off unless DEVICECLOUD_HW_TESTS
 * names `ios` (e.g. `DEVICECLOUD_HW_TESTS=ios npx vitest run test/hardware/ios.hw.test.ts`),
 * because it installs, uninstalls, reboots and cleans the phone. It needs a host set up as
 * docs/device-hosts.md#ios says (go-ios, usbmuxd, on iOS 17+ `ios tunnel start`, WebDriverAgent
 * not needed here), and:
 *
 * - DEVICECLOUD_IOS_SIGNING_DIR: the service's signing folder (a development profile that lists the
 *   phone, and its identity); DEVICECLOUD_IOS_BIN and DEVICECLOUD_IOS_SIGNER as for the agent;
 * - DEVICECLOUD_HW_IOS_APP: a development or ad-hoc build (.ipa) of any app;
 * - DEVICECLOUD_HW_IOS_RUNNER: the XCUITest runner built from test/hardware/ios/ConformanceUITests.swift
 *   against that app (a zip of its -Runner.app, or an .ipa); the run's SCENARIO parameter picks
 *   what its tests do (pass, fail one, never end, leave a file behind, look for that file);
 * - optionally DEVICECLOUD_HW_UDID, to pick one phone when several are attached.
 *
 * Cleaning reboots the phone after every case; allow several minutes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, it, vi } from 'vitest';
import type { Driver, LocalFile } from '../../src/agent/driver.ts';
import { iosDriverFromSettings } from '../../src/agent/drivers/ios/index.ts';
import { type DriverFixtures, type JobSpec, describeDriverConformance } from '../drivers/conformance.ts';

const enabled = (process.env.DEVICECLOUD_HW_TESTS ?? '').split(/[,\s]+/).includes('ios');
const needed = ['DEVICECLOUD_IOS_SIGNING_DIR', 'DEVICECLOUD_HW_IOS_APP', 'DEVICECLOUD_HW_IOS_RUNNER'] as const;
const missing = needed.filter((name) => process.env[name] === undefined || !fs.existsSync(process.env[name]!));

if (!enabled) {
  console.info(
    'test/hardware/ios.hw.test.ts: skipped (set DEVICECLOUD_HW_TESTS=ios with an iPhone attached; see docs/device-hosts.md#ios)',
  );
  describe('ios driver on a real iPhone', () => {
    it.skip('skipped: set DEVICECLOUD_HW_TESTS=ios (and the DEVICECLOUD_HW_IOS_* builds) with an iPhone attached to run the conformance cases on it', () =>
      undefined);
  });
} else if (missing.length > 0) {
  describe('ios driver on a real iPhone', () => {
    it(`needs ${needed.join(', ')}`, () => {
      throw new Error(
        `DEVICECLOUD_HW_TESTS=ios is set but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set or missing on disk (see docs/device-hosts.md#ios)`,
      );
    });
  });
} else {
  // A reboot per cleaning, installs over USB, XCTest start-up: far beyond the suite's default limits.
  vi.setConfig({ testTimeout: 15 * 60_000, hookTimeout: 5 * 60_000 });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-hw-ios-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const local = (file: string): LocalFile => ({ path: file, name: path.basename(file), properties: {} });
  const scenario = (name: string): JobSpec => ({
    kind: 'xcuitest',
    app: local(process.env.DEVICECLOUD_HW_IOS_APP!),
    tests: local(process.env.DEVICECLOUD_HW_IOS_RUNNER!),
    parameters: { SCENARIO: name },
    timeoutSeconds: 600,
  });
  const fixtures: DriverFixtures = {
    passing: async () => scenario('passing'),
    failing: async () => scenario('failing'),
    endless: async () => scenario('endless'),
    leavesTrace: async () => scenario('trace'),
    expectsClean: async () => scenario('check-clean'),
    unsupportedKind: 'instrumentation',
  };

  describeDriverConformance('ios (real iPhone)', async () => {
    const driver = iosDriverFromSettings({
      dataDir: path.join(root, 'agent'),
      binary: process.env.DEVICECLOUD_IOS_BIN,
      signingDir: process.env.DEVICECLOUD_IOS_SIGNING_DIR,
      signer: process.env.DEVICECLOUD_IOS_SIGNER,
    });
    const wanted = process.env.DEVICECLOUD_HW_UDID;
    const onePhone: Driver = {
      ...driver,
      listDevices: async () => {
        const phones = (await driver.listDevices()).filter(
          (device) => wanted === undefined || device.serial === wanted,
        );
        if (phones.length === 0)
          throw new Error(`no iPhone${wanted === undefined ? '' : ` ${wanted}`} is listed by go-ios (ios list)`);
        return phones;
      },
    };
    return { driver: onePhone, fixtures, cleanup: async () => undefined };
  });
}
