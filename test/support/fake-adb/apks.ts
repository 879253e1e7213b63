/**
 * Test APKs for the fake phone, built like the examples' ones (a real binary manifest in a real
 * zip), each under its own package name: the package name picks what `am instrument` replays
 * (scenarios.ts). They carry no runnable code, so they are no use on a real phone.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LocalFile } from '../../../src/agent/driver.ts';
import { inspectFile } from '../../../src/files/inspect/index.ts';
import { encodeAxml } from '../../../examples/lib/axml.ts';
import { zip } from '../../../examples/lib/zip-writer.ts';

export async function testApk(
  dir: string,
  packageName: string,
  targetPackage = 'com.devicecloud.sample',
): Promise<LocalFile> {
  const manifest = encodeAxml({
    name: 'manifest',
    attrs: { 'android:versionCode': 1, 'android:versionName': '1.0', package: packageName },
    children: [
      { name: 'uses-sdk', attrs: { 'android:minSdkVersion': 21, 'android:targetSdkVersion': 34 } },
      { name: 'application', attrs: { 'android:label': 'Tests' } },
      {
        name: 'instrumentation',
        attrs: { 'android:name': 'androidx.test.runner.AndroidJUnitRunner', 'android:targetPackage': targetPackage },
      },
    ],
  });
  const file = path.join(dir, `${packageName}.apk`);
  fs.writeFileSync(
    file,
    await zip([
      ['AndroidManifest.xml', manifest],
      ['classes.dex', Buffer.concat([Buffer.from('dex\n035\0', 'latin1'), Buffer.alloc(104)])],
    ]),
  );
  return localFile(file);
}

export async function localFile(file: string): Promise<LocalFile> {
  const name = path.basename(file);
  return { path: file, name, properties: (await inspectFile(file, name)).properties };
}
