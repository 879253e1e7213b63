import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import { InspectionError, findEntryScript, inspectFile } from '../../src/files/inspect/index.ts';
import { ipa, runnerZip, xctestZip } from '../support/fake-ios/index.ts';
import { bombZip, traversalZip, zip } from '../support/zips.ts';

let dir: string;
let files: Record<string, string>;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-inspect-'));
  files = await buildExamples(dir, { variants: true });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function refused(file: string, name: string, reason: string | RegExp) {
  await expect(inspectFile(file, name)).rejects.toBeInstanceOf(InspectionError);
  await expect(inspectFile(file, name)).rejects.toThrow(reason);
}

async function write(name: string, content: Buffer | string): Promise<string> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('inspecting uploads', () => {
  it('reads an Android app: package, versions, SDKs, activities', async () => {
    const inspection = await inspectFile(files['sample-app.apk']!, 'sample-app.apk');
    expect(inspection).toEqual({
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      mimetype: 'application/vnd.android.package-archive',
      properties: {
        package_name: 'com.devicecloud.sample',
        version_name: '1.0',
        version_code: '1',
        min_sdk: '24',
        target_sdk: '34',
        main_activity: 'com.devicecloud.sample.MainActivity',
        activities:
          'com.devicecloud.sample.MainActivity,com.devicecloud.sample.SettingsActivity,com.devicecloud.sample.AboutActivity',
        exported_activities: 'com.devicecloud.sample.MainActivity,com.devicecloud.sample.SettingsActivity',
        label: 'Sample Shop',
        virus_scan_status: 'disabled',
      },
    });
  });

  it('recognises a test APK by its instrumentation', async () => {
    const inspection = await inspectFile(files['sample-app-tests.apk']!, 'tests.apk');
    expect(inspection.inputType).toBe('TEST');
    expect(inspection.properties).toMatchObject({
      instrumentation_name: 'androidx.test.runner.AndroidJUnitRunner',
      target_package_name: 'com.devicecloud.sample',
    });
  });

  it('reads iOS apps with XML and binary Info.plist, and the kind of build', async () => {
    for (const [name, distribution] of [
      ['sample-app.ipa', 'development'],
      ['binary-plist.ipa', 'development'],
      ['adhoc.ipa', 'ad-hoc'],
    ] as const) {
      const inspection = await inspectFile(files[name]!, name);
      expect(inspection).toMatchObject({ inputType: 'APPLICATION', osType: 'IOS' });
      expect(inspection.properties).toMatchObject({
        bundle_identifier: 'com.devicecloud.sample',
        bundle_name: 'Sample Shop',
        version_name: '1.0',
        min_os_version: '15.0',
        screens: 'Home,Settings,About',
        distribution,
        team_identifier: 'DEVCLOUD01',
        expiration_date: '2030-01-01T00:00:00.000Z',
      });
    }
  });

  it('refuses iOS builds that cannot go on test devices, saying why', async () => {
    await refused(files['appstore.ipa']!, 'appstore.ipa', 'App Store distribution build');
    await refused(files['enterprise.ipa']!, 'enterprise.ipa', 'enterprise (in-house) distribution build');
    await refused(files['simulator.ipa']!, 'simulator.ipa', 'simulator build');
    await refused(files['no-profile.ipa']!, 'no-profile.ipa', 'no embedded provisioning profile');
  });

  it('refuses files that claim to be apps but are not', async () => {
    await refused(files['broken.apk']!, 'broken.apk', 'AndroidManifest.xml is missing');
    await refused(files['not-a-zip.apk']!, 'not-a-zip.apk', 'not a valid APK');
    await refused(files['tests-green.zip']!, 'renamed.ipa', 'Info.plist is missing');
  });

  it('recognises test packages by their run-tests.sh, at the root or in one folder', async () => {
    expect(await inspectFile(files['tests-green.zip']!, 'tests.zip')).toMatchObject({
      inputType: 'TEST',
      osType: null,
      properties: { entry_script: 'run-tests.sh' },
    });
    const nested = await write(
      'nested.zip',
      await zip([
        ['suite/run-tests.sh', 'echo'],
        ['suite/lib/a.py', 'x'],
      ]),
    );
    expect((await inspectFile(nested, 'nested.zip')).properties.entry_script).toBe('suite/run-tests.sh');
    expect(findEntryScript(['a/run-tests.sh', 'b/x'])).toBeNull();
  });

  it('recognises iOS tests: an XCUITest runner zipped or as an .ipa, and an XCTest bundle', async () => {
    const runner = await write(
      'SampleUITests-Runner.zip',
      await runnerZip({
        bundleId: 'com.example.SampleUITests.xctrunner',
        xctest: 'SampleUITests.xctest',
        scenario: 'passing',
      }),
    );
    expect(await inspectFile(runner, 'SampleUITests-Runner.zip')).toMatchObject({
      inputType: 'TEST',
      osType: 'IOS',
      properties: { test_bundle: 'SampleUITests.xctest' },
    });
    const xctest = await write('SampleTests.zip', await xctestZip('SampleTests.xctest', 'passing'));
    expect(await inspectFile(xctest, 'SampleTests.zip')).toMatchObject({
      inputType: 'TEST',
      osType: 'IOS',
      properties: { test_bundle: 'SampleTests.xctest' },
    });
    const runnerIpa = await write(
      'runner.ipa',
      await ipa({
        bundleId: 'com.example.SampleUITests.xctrunner',
        executable: 'SampleUITests-Runner',
        plugins: { 'SampleUITests.xctest': 'passing' },
      }),
    );
    expect(await inspectFile(runnerIpa, 'runner.ipa')).toMatchObject({
      inputType: 'TEST',
      osType: 'IOS',
      properties: { bundle_identifier: 'com.example.SampleUITests.xctrunner' },
    });
    // An app that merely carries tests in its PlugIns is still the app.
    const app = await write(
      'app-with-tests.ipa',
      await ipa({ bundleId: 'com.example.app', executable: 'App', plugins: { 'AppTests.xctest': 'passing' } }),
    );
    expect(await inspectFile(app, 'app-with-tests.ipa')).toMatchObject({ inputType: 'APPLICATION', osType: 'IOS' });
  });

  it('treats everything else as data', async () => {
    const zipWithout = await write('data.zip', await zip([['fixtures/users.json', '[]']]));
    expect(await inspectFile(zipWithout, 'data.zip')).toMatchObject({ inputType: 'DATA', mimetype: 'application/zip' });
    const text = await write('notes.txt', 'hello');
    expect(await inspectFile(text, 'notes.txt')).toMatchObject({
      inputType: 'DATA',
      osType: null,
      mimetype: 'text/plain',
    });
  });

  it('refuses zips that escape their folder or expand like a bomb', async () => {
    await refused(await write('evil.zip', await traversalZip()), 'evil.zip', /unsafe entry name|invalid relative path/);
    await refused(await write('bomb.zip', await bombZip()), 'bomb.zip', 'zip bomb');
  });
});
