/**
 * What the adb driver tests (test/drivers/adb*.test.ts) share: the example app and test APKs,
 * built once per file, the conformance fixtures, and a driver on a fake ADB server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import type { Driver, LocalFile } from '../../src/agent/driver.ts';
import { testSandbox } from '../support/sandbox.ts';
import { type AdbDriverOptions, createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { testApk, localFile } from '../support/fake-adb/apks.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { type DriverFixtures, type JobSpec } from './conformance.ts';

export const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-adb-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
export let app: LocalFile;
export const apks = new Map<string, LocalFile>();

beforeAll(async () => {
  const examples = await buildExamples(path.join(root, 'examples'));
  app = await localFile(examples['sample-app.apk']!);
  for (const name of ['sample', 'failing', 'crash', 'endless', 'trace', 'check'])
    apks.set(name, await testApk(root, `com.devicecloud.${name}.test`));
});

export const instrumentation = (name: string): JobSpec => ({ kind: 'instrumentation', app, tests: apks.get(name)! });

export const fixtures: DriverFixtures = {
  passing: async () => instrumentation('sample'),
  failing: async () => instrumentation('failing'),
  endless: async () => instrumentation('endless'),
  leavesTrace: async () => instrumentation('trace'),
  expectsClean: async () => instrumentation('check'),
  unsupportedKind: 'xctest',
};

export function driverFor(
  fake: FakeAdbServer,
  dataDir: string,
  extra: Partial<AdbDriverOptions> = {},
  logs: string[] = [],
): Driver {
  return createAdbDriver({
    dataDir,
    server: { host: '127.0.0.1', port: fake.port },
    log: (message) => logs.push(message),
    bootTimeoutMs: 10_000,
    crawler: { settleMs: 100, monkeyEvents: 40, monkeyThrottleMs: 10 },
    ui: { pollMs: 20, screenTimeoutMs: 1500, flowTimeoutMs: 20_000 },
    // The fake ADB server listens on the host's loopback: the network of private clouds.
    sandbox: testSandbox(dataDir, { network: 'host' }),
    ...extra,
  });
}
