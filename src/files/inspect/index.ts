/**
 * Tells what an uploaded file is (docs/api.md#files): an Android or iOS app, a test APK, a test
 * package (a zip with run-tests.sh), or data; and reads its properties. Content decides, helped by
 * the name: a file named .apk/.ipa that is not one is refused with the reason.
 */
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../../domain/zip-limits.ts';
import { ZipError, listEntries } from '../zip.ts';
import { inspectApk } from './apk.ts';
import { InspectionError } from './errors.ts';
import { inspectIpa } from './ipa.ts';

export { InspectionError } from './errors.ts';

export interface Inspection {
  readonly inputType: 'APPLICATION' | 'TEST' | 'DATA';
  readonly osType: 'ANDROID' | 'IOS' | null;
  readonly mimetype: string;
  readonly properties: Record<string, string>;
}

/** No virus scanner is configured: clients wait for `safe` or `disabled` (docs/api.md#files). */
const SCAN = { virus_scan_status: 'disabled' } as const;

/** `limits`: what a zip may expand to (config.ts); one that breaks them, or cannot unpack, is refused. */
export async function inspectFile(
  filePath: string,
  originalName: string,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<Inspection> {
  const lower = originalName.toLowerCase();
  const claimsApk = lower.endsWith('.apk');
  const claimsIpa = lower.endsWith('.ipa');
  let entries: Awaited<ReturnType<typeof listEntries>>;
  try {
    entries = await listEntries(filePath, limits);
  } catch (error) {
    if (!(error instanceof ZipError)) throw error;
    if (error.problem === 'CORRUPT' && !claimsApk && !claimsIpa) return data(originalName);
    const what = claimsApk ? 'a valid APK' : claimsIpa ? 'a valid IPA' : 'a safe zip file';
    throw new InspectionError(`${originalName} is not ${what}: ${error.message}`);
  }
  const names = new Set(entries.map((entry) => entry.name));

  if (names.has('AndroidManifest.xml') || claimsApk) {
    if (!names.has('AndroidManifest.xml'))
      throw new InspectionError(`${originalName} is not a valid APK: AndroidManifest.xml is missing`);
    const apk = await inspectApk(filePath, originalName);
    return {
      inputType: apk.isTest ? 'TEST' : 'APPLICATION',
      osType: 'ANDROID',
      mimetype: 'application/vnd.android.package-archive',
      properties: { ...apk.properties, ...SCAN },
    };
  }
  if (entries.some((entry) => /^Payload\/[^/]+\.app\/Info\.plist$/.test(entry.name)) || claimsIpa) {
    const properties = await inspectIpa(filePath, originalName);
    // Xcode names a UI test runner's bundle id <tests>.xctrunner: an .ipa of one is tests, not an app.
    const runner = properties.bundle_identifier!.endsWith('.xctrunner');
    return {
      inputType: runner ? 'TEST' : 'APPLICATION',
      osType: 'IOS',
      mimetype: 'application/octet-stream',
      properties: { ...properties, ...SCAN },
    };
  }
  const iosTests = findIosTestBundle(entries.map((entry) => entry.name));
  if (iosTests !== null)
    return {
      inputType: 'TEST',
      osType: 'IOS',
      mimetype: 'application/zip',
      properties: { test_bundle: iosTests, ...SCAN },
    };
  const entryScript = findEntryScript(entries.map((entry) => entry.name));
  if (entryScript !== null) {
    return {
      inputType: 'TEST',
      osType: null,
      mimetype: 'application/zip',
      properties: { entry_script: entryScript, ...SCAN },
    };
  }
  return data(originalName, 'application/zip');
}

/**
 * iOS tests in a zip, as Xcode's build-for-testing leaves them: the `<Name>-Runner.app` folder of
 * an XCUITest runner (its bundle in PlugIns), or an `.xctest` bundle for XCTest. Answers the bundle.
 */
export function findIosTestBundle(names: readonly string[]): string | null {
  for (const name of names) {
    const match = /^(?:[^/]+\.app\/PlugIns\/)?([^/]+\.xctest)\/Info\.plist$/.exec(name);
    if (match !== null) return match[1]!;
  }
  return null;
}

/** run-tests.sh at the root, or inside the single top-level folder a zip tool made. */
export function findEntryScript(names: readonly string[]): string | null {
  if (names.includes('run-tests.sh')) return 'run-tests.sh';
  const tops = new Set(names.map((name) => name.split('/')[0]));
  if (tops.size === 1) {
    const [top] = tops;
    if (names.includes(`${top}/run-tests.sh`)) return `${top}/run-tests.sh`;
  }
  return null;
}

function data(name: string, mimetype?: string): Inspection {
  return { inputType: 'DATA', osType: null, mimetype: mimetype ?? mimeOf(name), properties: { ...SCAN } };
}

const MIME: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  json: 'application/json',
  xml: 'application/xml',
  csv: 'text/csv',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  mp4: 'video/mp4',
  zip: 'application/zip',
  pdf: 'application/pdf',
};

function mimeOf(name: string): string {
  return MIME[name.toLowerCase().split('.').pop() ?? ''] ?? 'application/octet-stream';
}
