/**
 * Re-signing (docs/api.md#files: the app's own provisioning profile is replaced by the service's). The
 * service's signing material lives in one folder on the device host (docs/device-hosts.md#ios):
 *
 *   profile.mobileprovision   a development profile listing the host's devices (a wildcard App ID)
 *   identity.p12              the certificate and key the profile was issued for
 *   identity-password         its password, when it has one (keep the folder readable by the agent only)
 *
 * Two signers sit behind one small interface: go-ios' own `ios sign app` (go-codesign, no other
 * tool needed; the default) and zsign, given by path. Both are passed the password on their
 * command line, which other users of the host can see in `ps` while an app is signed: prefer an
 * identity without a password on a host of its own.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type GoIos, udidArg } from './go-ios.ts';
import { type ProvisioningProfile, parseProfile } from './profile.ts';

export interface SigningSetup {
  readonly dir: string;
  readonly profilePath: string;
  readonly profileBytes: Buffer;
  readonly profile: ProvisioningProfile;
  readonly identityPath: string;
  readonly password: string;
}

export interface Signer {
  readonly name: string;
  /** Re-signs an .app folder with the service's identity and profile into `outDir`; answers what to install. */
  sign(appDir: string, outDir: string, udid: string, signal: AbortSignal): Promise<string>;
}

/** Reads and checks the signing folder; the message says what is missing or wrong. */
export function loadSigningSetup(dir: string, now = new Date()): SigningSetup {
  const profilePath = path.join(dir, 'profile.mobileprovision');
  const identityPath = path.join(dir, 'identity.p12');
  const passwordPath = path.join(dir, 'identity-password');
  for (const file of [profilePath, identityPath]) {
    if (!fs.existsSync(file))
      throw new Error(`the iOS signing folder ${dir} has no ${path.basename(file)} (see docs/device-hosts.md#ios)`);
  }
  const profileBytes = fs.readFileSync(profilePath);
  let profile: ProvisioningProfile;
  try {
    profile = parseProfile(profileBytes);
  } catch (error) {
    throw new Error(`${profilePath}: ${(error as Error).message}`);
  }
  // XCTest attaches to the app and its runner, which only a development profile (get-task-allow) permits.
  if (profile.distribution !== 'development') {
    throw new Error(
      `${profilePath} is a${profile.distribution === 'ad-hoc' || profile.distribution === 'enterprise' ? 'n' : ''} ${profile.distribution} profile; the service needs a development profile (get-task-allow), which XCTest requires`,
    );
  }
  if (profile.expiresAt !== null && profile.expiresAt.getTime() <= now.getTime()) {
    throw new Error(
      `${profilePath} ("${profile.name}") expired on ${profile.expiresAt.toISOString().slice(0, 10)}; download a renewed one`,
    );
  }
  const password = fs.existsSync(passwordPath) ? (fs.readFileSync(passwordPath, 'utf8').split('\n')[0] ?? '') : '';
  return { dir, profilePath, profileBytes, profile, identityPath, password };
}

/** go-ios' `ios sign app`: a signed copy of the .app folder. */
export function goIosSigner(goIos: GoIos, setup: SigningSetup): Signer {
  return {
    name: 'go-ios',
    async sign(appDir, outDir, udid, signal) {
      const output = path.join(outDir, path.basename(appDir));
      fs.mkdirSync(outDir, { recursive: true });
      await goIos.run(
        [
          'sign',
          'app',
          `--path=${appDir}`,
          `--p12file=${setup.identityPath}`,
          `--profile=${setup.profilePath}`,
          ...(setup.password === '' ? [] : [`--p12password=${setup.password}`]),
          `--output=${output}`,
          udidArg(udid),
        ],
        { timeoutMs: 10 * 60_000, signal },
      );
      return output;
    },
  };
}

/** zsign (github.com/zhlynn/zsign): signs the folder into an .ipa. Like go-ios, it gets the agent's environment without DEVICECLOUD_*. */
export function zsignSigner(binary: string, setup: SigningSetup, env: Readonly<Record<string, string>> = {}): Signer {
  const environment = {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('DEVICECLOUD_'))),
    ...env,
  };
  return {
    name: 'zsign',
    async sign(appDir, outDir, _udid, signal) {
      const output = path.join(outDir, `${path.basename(appDir, '.app')}.ipa`);
      fs.mkdirSync(outDir, { recursive: true });
      const args = [
        '-k',
        setup.identityPath,
        ...(setup.password === '' ? [] : ['-p', setup.password]),
        '-m',
        setup.profilePath,
        '-o',
        output,
        '-z',
        '1',
        appDir,
      ];
      await new Promise<void>((resolve, reject) => {
        execFile(
          binary,
          args,
          { env: environment, timeout: 10 * 60_000, signal, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => {
            if (error === null) return resolve();
            const said = `${stderr}\n${stdout}`
              .trim()
              .split('\n')
              .filter((line) => line.trim() !== '')
              .slice(-3)
              .join(' / ');
            reject(new Error(`zsign failed: ${said || error.message}`));
          },
        );
      });
      return output;
    },
  };
}
