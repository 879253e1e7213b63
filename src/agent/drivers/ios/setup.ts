/**
 * What the iOS driver needs on a device host, found and checked when the agent starts, so that a
 * missing piece stops the start with one clear line instead of failing every device run:
 * the go-ios executable, the service's signing folder, and the signer.
 *
 * go-ios: the path given (--ios-bin), else the binary the `go-ios` npm package carries when it is
 * installed next to devicecloud (its install script copies the binary into npm's global bin,
 * which fails without root: install it with --ignore-scripts, the binaries are in the package),
 * else `ios` on PATH.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { GoIos } from './go-ios.ts';
import { type Signer, type SigningSetup, goIosSigner, loadSigningSetup, zsignSigner } from './signer.ts';

export const GO_IOS_HINT =
  'install go-ios on this host (npm install --no-save --ignore-scripts go-ios@1.2.0, or a release from github.com/danielpaulus/go-ios) or give its path with --ios-bin (DEVICECLOUD_IOS_BIN)';

export function findGoIos(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured !== undefined) {
    if (!isExecutable(configured)) throw new Error(`--ios-bin ${configured} is not an executable file; ${GO_IOS_HINT}`);
    return configured;
  }
  const packaged = packagedGoIos();
  if (packaged !== null) return packaged;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir !== '' && isExecutable(path.join(dir, 'ios'))) return path.join(dir, 'ios');
  }
  throw new Error(`go-ios was not found: ${GO_IOS_HINT}`);
}

function packagedGoIos(): string | null {
  let root: string;
  try {
    root = path.dirname(createRequire(import.meta.url).resolve('go-ios/package.json'));
  } catch {
    return null;
  }
  const os = ({ darwin: 'darwin', linux: 'linux' } as Record<string, string>)[process.platform];
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  if (os === undefined || arch === undefined) return null;
  const binary = path.join(root, 'dist', `go-ios-${os}-${arch}_${os}_${arch}`, 'ios');
  if (!fs.existsSync(binary)) return null;
  // npm without scripts may have left the execute bit off.
  if (!isExecutable(binary)) fs.chmodSync(binary, 0o755);
  return binary;
}

export function loadSigning(signingDir: string | undefined): SigningSetup {
  if (signingDir === undefined) {
    throw new Error(
      "no signing folder was given: --ios-signing (DEVICECLOUD_IOS_SIGNING_DIR) names the folder with the service's profile.mobileprovision and identity.p12 (docs/device-hosts.md#ios)",
    );
  }
  if (!fs.existsSync(signingDir) || !fs.statSync(signingDir).isDirectory())
    throw new Error(`--ios-signing ${signingDir} is not a folder`);
  return loadSigningSetup(signingDir);
}

/** `go-ios` (the default) signs with `ios sign app`; a path names zsign or a tool taking zsign's arguments. */
export function chooseSigner(
  value: string | undefined,
  goIos: GoIos,
  signing: SigningSetup,
  env: Readonly<Record<string, string>> = {},
): Signer {
  if (value === undefined || value === 'go-ios') return goIosSigner(goIos, signing);
  if (!isExecutable(value)) throw new Error(`--ios-signer ${value} is neither go-ios nor an executable zsign`);
  return zsignSigner(value, signing, env);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
