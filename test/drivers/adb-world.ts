/**
 * What the adb driver tests (test/drivers/adb*.test.ts) share: the example app and test APKs,
 * built once per file (`adbFiles()`), the conformance fixtures, and a driver on a fake ADB server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { testSandbox } from '../support/sandbox.ts';
import { type AdbDriverOptions, createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { testApk, localFile } from '../support/fake-adb/apks.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { type DriverFixtures, type JobSpec } from './conformance.ts';

export let root: string;
export let app: LocalFile;
export const apks = new Map<string, LocalFile>();

/**
 * The calling file's folder, example app and test APKs, made by its hooks. The hooks are the file's,
 * not this module's: files share a worker's modules (vitest.config.ts), so hooks registered when
 * this module loaded would belong to the first file that imported it only.
 */
export function adbFiles(): void {
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-adb-'));
    const examples = await buildExamples(path.join(root, 'examples'));
    app = await localFile(examples['sample-app.apk']!);
    apks.clear();
    for (const name of ['sample', 'failing', 'crash', 'endless', 'trace', 'check'])
      apks.set(name, await testApk(root, `com.devicecloud.${name}.test`));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
}

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

export const PIXEL = '28141FDH2000JY';
export const MOTO = 'ZY2242CQ7N';
/** The pool's own account, signed in by hand before the agent first saw the phone. */
export const LAB_ACCOUNT = { name: 'lab.pixel7@gmail.com', type: 'com.google' };

export interface AdbBench {
  readonly fake: FakeAdbServer;
  readonly driver: Driver;
  readonly dataDir: string;
  readonly logs: string[];
  /** How many jobs `job` has made: the last one's id and work folder. */
  readonly jobs: number;
}

/**
 * A file's bench: a fake ADB server with the Pixel (signed in to the lab's account) and a Moto,
 * and a driver on it, set up by the file's hooks. `firstSight` lists the devices once, as the
 * agent does at start, so that their baselines are recorded before any test.
 */
export function adbBench({ firstSight = true } = {}) {
  const bench = { logs: [] as string[], jobs: 0 } as { -readonly [K in keyof AdbBench]: AdbBench[K] };
  beforeAll(async () => {
    bench.fake = await FakeAdbServer.start([
      { serial: PIXEL, accounts: [LAB_ACCOUNT] },
      { serial: MOTO, model: 'moto-g5' },
    ]);
    bench.dataDir = fs.mkdtempSync(path.join(root, 'driver-'));
    bench.driver = driverFor(bench.fake, bench.dataDir, {}, bench.logs);
    if (firstSight) await bench.driver.listDevices();
  });
  afterAll(async () => {
    await bench.driver.close();
    await bench.fake.close();
  });
  const job = (spec: JobSpec & Partial<Job>): Job => {
    bench.jobs += 1;
    const workDir = path.join(bench.dataDir, 'work', String(bench.jobs));
    fs.mkdirSync(workDir, { recursive: true });
    return {
      deviceRunId: bench.jobs,
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
  /** A deadline, not a wait: green runs go on as soon as the condition holds. */
  const until = async (check: () => boolean | Promise<boolean>, ms = 30_000) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) if (await check()) return;
    throw new Error('condition not met in time');
  };
  return { bench: bench as AdbBench, job, until };
}
