/**
 * Getting a user's build onto a device: unpack it, refuse what may not run on test devices (App
 * Store and simulator builds, builds without a profile: the same rules as at upload,
 * files/inspect/ipa.ts), re-sign it with the service's profile, check that the signer really put
 * that profile in, and install it.
 */
import path from 'node:path';
import type { ExecutionContext, LocalFile } from '../../driver.ts';
import { type Bundle, embeddedProfileOf, readBundle, unpackApp } from './bundle.ts';
import type { GoIos } from './go-ios.ts';
import { installableBuild } from './profile.ts';
import type { Signer, SigningSetup } from './signer.ts';

/** The user's build cannot run here: the run FAILS with this reason (it is no infrastructure failure). */
export class Refusal extends Error {}

export async function unpackBuild(file: LocalFile, destDir: string, context: ExecutionContext): Promise<Bundle> {
  let appDir: string;
  try {
    appDir = await unpackApp(file.path, file.name, destDir, context.unzip);
  } catch (error) {
    throw new Refusal((error as Error).message);
  }
  let bundle: Bundle;
  try {
    bundle = readBundle(appDir);
  } catch (error) {
    throw new Refusal(`${file.name}: ${(error as Error).message}`);
  }
  const platforms = Array.isArray(bundle.info.CFBundleSupportedPlatforms)
    ? bundle.info.CFBundleSupportedPlatforms.map(String)
    : [];
  if (platforms.includes('iPhoneSimulator'))
    throw new Refusal(`${file.name} is a simulator build; upload an ad-hoc or development build for devices`);
  if (bundle.profile === null)
    throw new Refusal(
      `${file.name} has no embedded provisioning profile (embedded.mobileprovision); upload an ad-hoc or development build`,
    );
  if (!installableBuild(bundle.profile)) {
    throw new Refusal(
      `${file.name} is an ${bundle.profile.distribution} distribution build (profile "${bundle.profile.name}"), which test devices do not take; upload an ad-hoc or development build`,
    );
  }
  return bundle;
}

export interface InstallDeps {
  readonly goIos: GoIos;
  readonly signer: Signer;
  readonly signing: SigningSetup;
}

/** Re-signs the bundle with the service's profile and installs it; answers what was installed. */
export async function signAndInstall(
  deps: InstallDeps,
  udid: string,
  bundle: Bundle,
  outDir: string,
  signal: AbortSignal,
): Promise<string> {
  const name = path.basename(bundle.dir);
  let signed: string;
  try {
    signed = await deps.signer.sign(bundle.dir, outDir, udid, signal);
  } catch (error) {
    throw new Error(`re-signing ${name} failed: ${(error as Error).message}`);
  }
  const embedded = await embeddedProfileOf(signed);
  if (embedded === null || !embedded.equals(deps.signing.profileBytes)) {
    throw new Error(
      `re-signing ${name} with ${deps.signer.name} left ${embedded === null ? 'no provisioning profile' : 'another provisioning profile'} in it, not the service's`,
    );
  }
  try {
    await deps.goIos.install(udid, signed, signal);
  } catch (error) {
    throw new Error(`installing ${name} failed: ${(error as Error).message}`);
  }
  return signed;
}
