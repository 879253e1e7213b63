/**
 * Provisioning profiles: the one an app arrives with (embedded.mobileprovision), which tells what
 * kind of build it is, and the service's own, which every app is re-signed with (docs/api.md#files). A
 * profile is a CMS envelope around an XML plist; like the upload inspection (files/inspect/ipa.ts,
 * whose classification this reuses) we read the plist between `<?xml` and `</plist>` and leave
 * the signature alone: the signer and the device check it.
 */
import { parseXmlPlist } from '../../../files/plist.ts';
import { type Distribution, distributionOf } from '../../../files/inspect/ipa.ts';

export interface ProvisioningProfile {
  readonly name: string;
  readonly uuid: string;
  readonly teamId: string | null;
  readonly distribution: Distribution;
  readonly expiresAt: Date | null;
  /** UDIDs the profile allows; empty for enterprise profiles, which allow every device. */
  readonly provisionedDevices: readonly string[];
  readonly provisionsAllDevices: boolean;
}

export function parseProfile(data: Buffer): ProvisioningProfile {
  const text = data.toString('latin1');
  const start = text.indexOf('<?xml');
  const end = text.indexOf('</plist>');
  if (start === -1 || end === -1 || end < start)
    throw new Error('not a provisioning profile: it holds no property list');
  let plist: unknown;
  try {
    plist = parseXmlPlist(data.subarray(start, end + '</plist>'.length).toString('utf8'));
  } catch (error) {
    throw new Error(`not a provisioning profile: ${(error as Error).message.slice(0, 200)}`);
  }
  if (typeof plist !== 'object' || plist === null || Array.isArray(plist))
    throw new Error('not a provisioning profile: its property list is not a dictionary');
  const dict = plist as Record<string, unknown>;
  return {
    name: typeof dict.Name === 'string' ? dict.Name : '',
    uuid: typeof dict.UUID === 'string' ? dict.UUID : '',
    teamId:
      Array.isArray(dict.TeamIdentifier) && typeof dict.TeamIdentifier[0] === 'string' ? dict.TeamIdentifier[0] : null,
    distribution: distributionOf(dict),
    expiresAt: dict.ExpirationDate instanceof Date ? dict.ExpirationDate : null,
    provisionedDevices: Array.isArray(dict.ProvisionedDevices) ? dict.ProvisionedDevices.map(String) : [],
    provisionsAllDevices: dict.ProvisionsAllDevices === true,
  };
}

/** Builds that may be re-signed and installed on test devices: development and ad-hoc ones only. */
export function installableBuild(profile: ProvisioningProfile): boolean {
  return profile.distribution === 'development' || profile.distribution === 'ad-hoc';
}

export function allowsDevice(profile: ProvisioningProfile, udid: string): boolean {
  return (
    profile.provisionsAllDevices ||
    profile.provisionedDevices.some((device) => device.toLowerCase() === udid.toLowerCase())
  );
}
