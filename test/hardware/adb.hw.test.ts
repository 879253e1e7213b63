/**
 * The driver conformance cases on a real Android phone, through the host's ADB server. Off unless
 * DEVICECLOUD_HW_TESTS names `adb` (e.g. `DEVICECLOUD_HW_TESTS=adb npx vitest run test/hardware`),
 * because it installs, uninstalls, reboots and cleans the phone. It needs:
 *
 * - an ADB server with a phone in state `device` (`adb devices`), and `adb` on PATH, which the
 *   test scripts use (they run as server-side packages, so no test APK has to be built);
 * - DEVICECLOUD_HW_APK: any installable APK with a launcher activity (the app under test, whose
 *   CPU and memory are sampled while it runs);
 * - optionally DEVICECLOUD_HW_TEST_APK: the instrumentation tests built from
 *   test/hardware/android/ConformanceTest.java against that app. With it the cases run a second
 *   time as instrumentation runs (install, `am instrument -r -w`, its status stream on a real
 *   phone); the run's SCENARIO parameter picks what its tests do;
 * - optionally DEVICECLOUD_HW_SERIAL, to pick one phone when several are attached.
 *
 * Cleaning reboots the phone after every case; allow several minutes. See docs/device-hosts.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, it, vi } from 'vitest';
import type { Driver, LocalFile } from '../../src/agent/driver.ts';
import { testSandbox } from '../support/sandbox.ts';
import { adbServerFromEnv, createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { localFile } from '../support/fake-adb/apks.ts';
import { zip } from '../support/zips.ts';
import { type DriverFixtures, type JobSpec, describeDriverConformance } from '../drivers/conformance.ts';

const enabled = (process.env.DEVICECLOUD_HW_TESTS ?? '').split(/[,\s]+/).includes('adb');
const apk = process.env.DEVICECLOUD_HW_APK;
const testApk = process.env.DEVICECLOUD_HW_TEST_APK;

if (!enabled) {
  console.info(
    'test/hardware/adb.hw.test.ts: skipped (set DEVICECLOUD_HW_TESTS=adb and DEVICECLOUD_HW_APK with a phone attached; see docs/device-hosts.md)',
  );
  describe('adb driver on a real phone', () => {
    it.skip('skipped: set DEVICECLOUD_HW_TESTS=adb (and DEVICECLOUD_HW_APK) with a phone attached to run the conformance cases on it', () =>
      undefined);
  });
} else if (apk === undefined || !fs.existsSync(apk) || (testApk !== undefined && !fs.existsSync(testApk))) {
  describe('adb driver on a real phone', () => {
    it('needs DEVICECLOUD_HW_APK: the path of an installable APK with a launcher activity (and DEVICECLOUD_HW_TEST_APK, if set, must exist)', () => {
      if (testApk !== undefined && !fs.existsSync(testApk))
        throw new Error(`DEVICECLOUD_HW_TEST_APK is ${testApk}, which does not exist`);
      throw new Error(
        `DEVICECLOUD_HW_TESTS=adb is set but DEVICECLOUD_HW_APK is ${apk === undefined ? 'not set' : `${apk}, which does not exist`}`,
      );
    });
  });
} else {
  // A reboot per cleaning, on a real phone: far beyond the suite's default limits.
  vi.setConfig({ testTimeout: 15 * 60_000, hookTimeout: 5 * 60_000 });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-hw-adb-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  let app: LocalFile | undefined;
  const TRACE = '/sdcard/Download/devicecloud-left-behind.txt';
  const junit = (cases: string) =>
    `cat > "$OUTPUT_DIR/junit.xml" <<XML\n<testsuite name="hardware">${cases}</testsuite>\nXML\n`;
  /** Starts the app under test and keeps it in front for a few seconds, so there is something to sample. */
  const launch = 'adb shell monkey -p "$APP_PACKAGE" -c android.intent.category.LAUNCHER 1 >/dev/null\nsleep 4\n';
  const serverSide = async (name: string, script: string): Promise<JobSpec> => {
    app ??= await localFile(apk);
    const file = path.join(root, `${name}.zip`);
    fs.writeFileSync(file, await zip([['run-tests.sh', `set -u\n${script}`, 0o100755]]));
    return {
      kind: 'server-side',
      app,
      tests: { path: file, name: `${name}.zip`, properties: {} },
      timeoutSeconds: 600,
    };
  };
  const fixtures: DriverFixtures = {
    passing: () =>
      serverSide(
        'passing',
        `${launch}model=$(adb shell getprop ro.product.model | tr -d '\\r')\n${junit('<testcase classname="hw" name="model $model"/>')}`,
      ),
    failing: () =>
      serverSide(
        'failing',
        `${launch}${junit('<testcase classname="hw" name="passes"/><testcase classname="hw" name="fails"><failure message="failed on purpose"/></testcase>')}`,
      ),
    endless: () => serverSide('endless', 'while true; do adb shell sleep 1; done\n'),
    leavesTrace: () =>
      serverSide('trace', `adb shell "echo secret > ${TRACE}"\n${junit('<testcase classname="hw" name="trace"/>')}`),
    expectsClean: () =>
      serverSide(
        'check',
        `if adb shell ls ${TRACE} 2>/dev/null | grep -q left-behind; then r='<failure message="trace found"/>'; else r=''; fi\n${junit('<testcase classname="hw" name="clean">$r</testcase>')}`,
      ),
    unsupportedKind: 'xctest',
  };

  const onePhone = (): Driver => {
    // One data dir for both rounds: the phone's baseline is recorded once.
    const driver = createAdbDriver({
      dataDir: path.join(root, 'agent'),
      server: adbServerFromEnv(process.env),
      hostEnv: process.env,
      sandbox: testSandbox(root, { network: 'host' }),
    });
    const wanted = process.env.DEVICECLOUD_HW_SERIAL;
    return {
      ...driver,
      listDevices: async () => {
        const phones = (await driver.listDevices()).filter(
          (device) => wanted === undefined || device.serial === wanted,
        );
        if (phones.length === 0)
          throw new Error(
            `no phone${wanted === undefined ? '' : ` ${wanted}`} in state "device" on the ADB server (see \`adb devices\`)`,
          );
        return phones;
      },
    };
  };

  describeDriverConformance('adb (real phone, server-side packages)', async () => ({
    driver: onePhone(),
    fixtures,
    cleanup: async () => undefined,
  }));

  if (testApk === undefined) {
    console.info(
      'test/hardware/adb.hw.test.ts: the instrumentation round is skipped (set DEVICECLOUD_HW_TEST_APK, built from test/hardware/android/ConformanceTest.java)',
    );
  } else {
    const instrumentation = async (scenario: string): Promise<JobSpec> => {
      app ??= await localFile(apk);
      // `class` keeps the app's own instrumentation tests, if its test APK has any, out of the run.
      return {
        kind: 'instrumentation',
        app,
        tests: await localFile(testApk),
        parameters: { SCENARIO: scenario, class: 'com.devicecloud.conformance.ConformanceTest' },
        timeoutSeconds: 600,
      };
    };
    const instrumented: DriverFixtures = {
      passing: () => instrumentation('passing'),
      failing: () => instrumentation('failing'),
      endless: () => instrumentation('endless'),
      leavesTrace: () => instrumentation('trace'),
      expectsClean: () => instrumentation('check-clean'),
      unsupportedKind: 'xctest',
    };
    describeDriverConformance('adb (real phone, instrumentation)', async () => ({
      driver: onePhone(),
      fixtures: instrumented,
      cleanup: async () => undefined,
    }));
  }
}
