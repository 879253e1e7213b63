/** The sample Android and iOS apps, built from scratch: real containers with real manifests. */
import { build, buildBinary } from 'plist';
import { type Element, encodeAxml } from './axml.ts';
import { type ZipEntry, zip } from './zip-writer.ts';

export const PACKAGE = 'com.devicecloud.sample';

const launcherFilter: Element = {
  name: 'intent-filter',
  children: [
    { name: 'action', attrs: { 'android:name': 'android.intent.action.MAIN' } },
    { name: 'category', attrs: { 'android:name': 'android.intent.category.LAUNCHER' } },
  ],
};

function manifest(children: Element[], versionName = '1.0'): Buffer {
  return encodeAxml({
    name: 'manifest',
    attrs: {
      'android:versionCode': 1,
      'android:versionName': versionName,
      package: children.some((child) => child.name === 'instrumentation') ? `${PACKAGE}.test` : PACKAGE,
    },
    children: [
      { name: 'uses-sdk', attrs: { 'android:minSdkVersion': 24, 'android:targetSdkVersion': 34 } },
      ...children,
    ],
  });
}

/** A dex header: magic and version; enough for tools that sniff the file, none execute it here. */
const DEX = Buffer.concat([Buffer.from('dex\n035\0', 'latin1'), Buffer.alloc(104)]);

function apk(manifestXml: Buffer): Promise<Buffer> {
  return zip([
    ['AndroidManifest.xml', manifestXml],
    ['classes.dex', DEX],
    ['META-INF/MANIFEST.MF', 'Manifest-Version: 1.0\r\nCreated-By: devicecloud examples\r\n\r\n'],
  ]);
}

export function sampleApk(): Promise<Buffer> {
  return apk(
    manifest([
      {
        name: 'application',
        attrs: { 'android:label': 'Sample Shop' },
        children: [
          {
            name: 'activity',
            attrs: { 'android:name': '.MainActivity', 'android:exported': true },
            children: [launcherFilter],
          },
          { name: 'activity', attrs: { 'android:name': '.SettingsActivity', 'android:exported': true } },
          { name: 'activity', attrs: { 'android:name': '.AboutActivity' } },
        ],
      },
    ]),
  );
}

export function sampleTestApk(): Promise<Buffer> {
  return apk(
    manifest([
      { name: 'application', attrs: { 'android:label': 'Sample Shop Tests' } },
      {
        name: 'instrumentation',
        attrs: { 'android:name': 'androidx.test.runner.AndroidJUnitRunner', 'android:targetPackage': PACKAGE },
      },
    ]),
  );
}

export function brokenApk(): Promise<Buffer> {
  return zip([['classes.dex', DEX]]);
}

export interface IpaOptions {
  readonly profile?: 'development' | 'ad-hoc' | 'enterprise' | 'app-store' | 'none';
  readonly simulator?: boolean;
  readonly binaryPlist?: boolean;
}

export function sampleIpa(options: IpaOptions = {}): Promise<Buffer> {
  const info = {
    CFBundleIdentifier: PACKAGE,
    CFBundleName: 'Sample',
    CFBundleDisplayName: 'Sample Shop',
    CFBundleShortVersionString: '1.0',
    CFBundleVersion: '1',
    MinimumOSVersion: '15.0',
    CFBundleExecutable: 'Sample',
    CFBundleSupportedPlatforms: [options.simulator ? 'iPhoneSimulator' : 'iPhoneOS'],
    DTPlatformName: options.simulator ? 'iphonesimulator' : 'iphoneos',
    // Not an Apple key: the screens the virtual driver's crawler visits.
    DCScreens: ['Home', 'Settings', 'About'],
  };
  const entries: ZipEntry[] = [
    ['Payload/Sample.app/Info.plist', options.binaryPlist ? Buffer.from(buildBinary(info)) : build(info)],
    ['Payload/Sample.app/Sample', Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01]), 0o100755],
  ];
  const kind = options.profile ?? 'development';
  if (kind !== 'none') entries.push(['Payload/Sample.app/embedded.mobileprovision', provisioningProfile(kind)]);
  return zip(entries);
}

/**
 * A provisioning profile is a CMS envelope around an XML plist. Without a signing identity we
 * cannot make a real signature, so the plist sits between DER-looking header and trailer bytes:
 * readers that extract the plist (as ours does) see what they would see in a real profile.
 */
function provisioningProfile(kind: 'development' | 'ad-hoc' | 'enterprise' | 'app-store'): Buffer {
  const profile: Record<string, unknown> = {
    AppIDName: 'Sample',
    Name: `Sample ${kind} profile`,
    TeamIdentifier: ['DEVCLOUD01'],
    ExpirationDate: new Date(Date.UTC(2030, 0, 1)),
    Entitlements: { 'application-identifier': `DEVCLOUD01.${PACKAGE}`, 'get-task-allow': kind === 'development' },
  };
  if (kind === 'development' || kind === 'ad-hoc')
    profile.ProvisionedDevices = ['00008030-001A2D3E4F5A6B7C', '00008101-000C0D0E0F101112'];
  if (kind === 'enterprise') profile.ProvisionsAllDevices = true;
  return Buffer.concat([
    Buffer.from([0x30, 0x82, 0x1f, 0x3c, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]),
    Buffer.from(build(profile as never)),
    Buffer.from([0xa0, 0x82, 0x00, 0x00]),
  ]);
}
