/**
 * App bundles on the agent's disk: an uploaded .ipa (or a zip holding an .app, as XCUITest
 * runners often come) is extracted safely, its Info.plist and embedded provisioning profile read,
 * an XCTest bundle placed into its PlugIns, and the result handed to the signer as a folder. The
 * safe extraction writes plain files, so the executables of the bundle and its nested bundles get
 * their execute bit back: installd wants it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parsePlist } from '../../../files/plist.ts';
import { listEntries, readEntry } from '../../../files/zip.ts';
import { type ProvisioningProfile, parseProfile } from './profile.ts';

export interface Bundle {
  /** The .app folder. */
  readonly dir: string;
  readonly bundleId: string;
  /** CFBundleExecutable: the process name, which crash reports are named after. */
  readonly executable: string;
  readonly info: Readonly<Record<string, unknown>>;
  /** embedded.mobileprovision, when the build carries one. */
  readonly profile: ProvisioningProfile | null;
  /** Names of the XCTest bundles in PlugIns/, e.g. SampleUITests.xctest. */
  readonly xctests: readonly string[];
}

const NESTED_BUNDLES = /\.(app|appex|xctest|framework)$/;

/** Extracts an .ipa or zip into `destDir` and answers the one .app it holds. */
export async function unpackApp(
  zipPath: string,
  fileName: string,
  destDir: string,
  unzip: (zipPath: string, destDir: string) => Promise<void>,
): Promise<string> {
  fs.mkdirSync(destDir, { recursive: true });
  try {
    await unzip(zipPath, destDir);
  } catch (error) {
    throw new Error(`${fileName} could not be unpacked: ${(error as Error).message}`);
  }
  const apps = appFolders(destDir);
  if (apps.length === 0) throw new Error(`${fileName} holds no .app bundle (expected Payload/<Name>.app)`);
  if (apps.length > 1)
    throw new Error(`${fileName} holds several apps (${apps.map((app) => path.basename(app)).join(', ')}); upload one`);
  restoreExecutables(apps[0]!);
  return apps[0]!;
}

/** .app folders where builds put them: Payload/, the top level, or one folder down. */
function appFolders(root: string): string[] {
  const found = new Set<string>();
  const look = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.endsWith('.app')) found.add(path.join(dir, entry.name));
    }
  };
  look(path.join(root, 'Payload'));
  look(root);
  if (found.size === 0) {
    for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === '__MACOSX') continue;
      look(path.join(root, entry.name));
      look(path.join(root, entry.name, 'Payload'));
    }
  }
  return [...found].sort();
}

export function readBundle(appDir: string): Bundle {
  const info = readInfo(appDir);
  const bundleId = typeof info.CFBundleIdentifier === 'string' ? info.CFBundleIdentifier : '';
  if (bundleId === '') throw new Error(`${path.basename(appDir)}: Info.plist has no CFBundleIdentifier`);
  const profileFile = path.join(appDir, 'embedded.mobileprovision');
  let profile: ProvisioningProfile | null = null;
  if (fs.existsSync(profileFile)) {
    try {
      profile = parseProfile(fs.readFileSync(profileFile));
    } catch (error) {
      throw new Error(
        `${path.basename(appDir)}: embedded.mobileprovision cannot be read (${(error as Error).message})`,
      );
    }
  }
  const plugins = path.join(appDir, 'PlugIns');
  const xctests = fs.existsSync(plugins)
    ? fs
        .readdirSync(plugins)
        .filter((name) => name.endsWith('.xctest'))
        .sort()
    : [];
  return {
    dir: appDir,
    bundleId,
    executable: typeof info.CFBundleExecutable === 'string' ? info.CFBundleExecutable : '',
    info,
    profile,
    xctests,
  };
}

/** The .xctest folder of an XCTest zip: at its top level or one folder down. */
export function findXctest(root: string): string | null {
  const at = (dir: string) =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name.endsWith('.xctest'))
      .map((entry) => path.join(dir, entry.name));
  const top = at(root);
  if (top.length > 0) return top.sort()[0]!;
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '__MACOSX') continue;
    const nested = at(path.join(root, entry.name));
    if (nested.length > 0) return nested.sort()[0]!;
  }
  return null;
}

/** Puts an XCTest bundle into the app's PlugIns, where the test runner (the app itself) loads it from. */
export function injectXctest(appDir: string, xctestDir: string): void {
  const target = path.join(appDir, 'PlugIns', path.basename(xctestDir));
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.cpSync(xctestDir, target, { recursive: true });
  restoreExecutables(target);
}

/** The provisioning profile a signed result carries: a signed .app folder, or an .ipa. */
export async function embeddedProfileOf(signed: string): Promise<Buffer | null> {
  if (fs.statSync(signed).isDirectory()) {
    const file = path.join(signed, 'embedded.mobileprovision');
    return fs.existsSync(file) ? fs.readFileSync(file) : null;
  }
  const entry = (await listEntries(signed)).find((candidate) =>
    /^Payload\/[^/]+\.app\/embedded\.mobileprovision$/.test(candidate.name),
  );
  if (entry === undefined) return null;
  return (await readEntry(signed, entry.name, 4 * 1024 * 1024))?.data ?? null;
}

function readInfo(bundleDir: string): Record<string, unknown> {
  const file = path.join(bundleDir, 'Info.plist');
  if (!fs.existsSync(file)) throw new Error(`${path.basename(bundleDir)} has no Info.plist`);
  const data = fs.readFileSync(file);
  try {
    const parsed = parsePlist(data);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a dictionary');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new Error(
      `${path.basename(bundleDir)}: Info.plist cannot be read (${(error as Error).message.slice(0, 200)})`,
    );
  }
}

function restoreExecutables(bundleDir: string): void {
  const visit = (dir: string) => {
    if (fs.existsSync(path.join(dir, 'Info.plist'))) {
      try {
        const executable = readInfo(dir).CFBundleExecutable;
        const file = typeof executable === 'string' ? path.join(dir, executable) : null;
        if (file !== null && path.dirname(file) === dir && fs.existsSync(file)) fs.chmodSync(file, 0o755);
      } catch {
        // A nested bundle without a readable Info.plist keeps its files as they are; the signer will say.
      }
    }
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) {
        if (entry.name.endsWith('.dylib')) fs.chmodSync(path.join(dir, entry.name), 0o755);
        continue;
      }
      if (
        NESTED_BUNDLES.test(entry.name) ||
        entry.name === 'Frameworks' ||
        entry.name === 'PlugIns' ||
        entry.name === 'Extensions'
      )
        visit(path.join(dir, entry.name));
    }
  };
  visit(bundleDir);
}
