/**
 * IPAs: Payload/<Name>.app/Info.plist (binary or XML) and the embedded provisioning profile. The
 * profile is a CMS (PKCS#7) envelope around an XML plist; we read the plist between `<?xml` and
 * `</plist>` rather than verify the signature, which the service replaces anyway (docs/api.md#files: the
 * app is re-signed with the service's own profile). What matters here is the kind of build:
 * development and ad-hoc builds are what a test cloud takes (issue 8: other builds are refused);
 * App Store, enterprise (in-house) and simulator builds are refused with the reason.
 */
import { parsePlist as parsePlistData } from '../plist.ts';
import { ZipError, listEntries, readEntry } from '../zip.ts';
import { InspectionError } from './errors.ts';

const MAX_PLIST = 4 * 1024 * 1024;
const MAX_PROFILE = 1024 * 1024;

type Dict = Record<string, unknown>;

export async function inspectIpa(filePath: string, name: string): Promise<Record<string, string>> {
  const entries = await listEntries(filePath);
  const infoEntry = entries.find((entry) => /^Payload\/[^/]+\.app\/Info\.plist$/.test(entry.name));
  if (infoEntry === undefined)
    throw new InspectionError(`${name} is not a valid IPA: Payload/<App>.app/Info.plist is missing`);
  const appDir = infoEntry.name.slice(0, -'Info.plist'.length);
  const info = parsePlist((await readEntry(filePath, infoEntry.name, MAX_PLIST))!.data, `${name}: Info.plist`);

  const platforms = Array.isArray(info.CFBundleSupportedPlatforms) ? info.CFBundleSupportedPlatforms.map(String) : [];
  if (platforms.includes('iPhoneSimulator') || String(info.DTPlatformName ?? '').toLowerCase() === 'iphonesimulator') {
    throw new InspectionError(`${name} is a simulator build; upload an ad-hoc or development build for devices`);
  }
  const profileEntry = await readEntry(filePath, `${appDir}embedded.mobileprovision`, MAX_PROFILE);
  if (profileEntry === undefined) {
    throw new InspectionError(
      `${name} has no embedded provisioning profile (embedded.mobileprovision); upload an ad-hoc or development build`,
    );
  }
  const profile = parseProfile(profileEntry.data, name);
  const distribution = distributionOf(profile);
  if (distribution === 'app-store' || distribution === 'enterprise') {
    throw new InspectionError(
      `${name} is ${DESCRIBED[distribution]}, which test devices do not take; upload an ad-hoc or development build`,
    );
  }

  const properties: Record<string, string> = {};
  const set = (key: string, value: unknown) => {
    if (typeof value === 'string' && value !== '') properties[key] = value;
    else if (typeof value === 'number') properties[key] = String(value);
  };
  set('bundle_identifier', info.CFBundleIdentifier);
  set('bundle_name', info.CFBundleDisplayName ?? info.CFBundleName);
  set('version_name', info.CFBundleShortVersionString);
  set('version_code', info.CFBundleVersion);
  set('min_os_version', info.MinimumOSVersion);
  if (Array.isArray(info.DCScreens)) set('screens', info.DCScreens.map(String).join(','));
  properties.distribution = distribution;
  set('provisioning_profile_name', profile.Name);
  set('team_identifier', Array.isArray(profile.TeamIdentifier) ? profile.TeamIdentifier[0] : undefined);
  if (profile.ExpirationDate instanceof Date) properties.expiration_date = profile.ExpirationDate.toISOString();
  if (properties.bundle_identifier === undefined)
    throw new InspectionError(`${name} is not a valid IPA: Info.plist has no CFBundleIdentifier`);
  return properties;
}

function parsePlist(data: Buffer, what: string): Dict {
  try {
    const parsed = parsePlistData(data);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a dictionary');
    return parsed as Dict;
  } catch (error) {
    if (error instanceof ZipError) throw error;
    throw new InspectionError(`${what} cannot be read: ${(error as Error).message.slice(0, 200)}`);
  }
}

function parseProfile(data: Buffer, name: string): Dict {
  const text = data.toString('latin1');
  const start = text.indexOf('<?xml');
  const end = text.indexOf('</plist>');
  if (start === -1 || end === -1 || end < start)
    throw new InspectionError(`${name}: the embedded provisioning profile cannot be read`);
  return parsePlist(data.subarray(start, end + '</plist>'.length), `${name}: embedded.mobileprovision`);
}

export type Distribution = 'development' | 'ad-hoc' | 'enterprise' | 'app-store';

const DESCRIBED: Readonly<Record<'app-store' | 'enterprise', string>> = {
  'app-store': 'an App Store distribution build',
  enterprise: 'an enterprise (in-house) distribution build',
};

export function distributionOf(profile: Dict): Distribution {
  const entitlements = (profile.Entitlements ?? {}) as Dict;
  if (profile.ProvisionsAllDevices === true) return 'enterprise';
  if (Array.isArray(profile.ProvisionedDevices) && profile.ProvisionedDevices.length > 0) {
    return entitlements['get-task-allow'] === true ? 'development' : 'ad-hoc';
  }
  return 'app-store';
}
