/**
 * Builds the sample files the README's quick start uses into examples/dist/ (`npm run examples`):
 * the sample Android app and test APK, the sample iOS app, and the two test packages. With
 * `--variants`, also the broken and refused files the tests use. Output is deterministic, so the
 * committed copies can be checked against this script.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { brokenApk, sampleApk, sampleIpa, sampleTestApk } from './lib/apps.ts';
import { type ZipEntry, zip } from './lib/zip-writer.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);

/** A small solid-colour screen with a lighter bar, as a PNG. */
export function screen(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const bar = y < height / 8 ? 60 : 0;
      const at = (width * y + x) << 2;
      png.data[at] = Math.min(255, rgb[0] + bar);
      png.data[at + 1] = Math.min(255, rgb[1] + bar);
      png.data[at + 2] = Math.min(255, rgb[2] + bar);
      png.data[at + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

async function testPackage(folder: string): Promise<Buffer> {
  const script = fs.readFileSync(path.join(HERE, 'tests', folder, 'run-tests.sh'));
  const entries: ZipEntry[] = [
    ['run-tests.sh', script, 0o100755],
    ['screens/home.png', screen(108, 192, [30, 90, 160])],
    ['screens/checkout.png', screen(108, 192, [40, 140, 70])],
  ];
  return zip(entries);
}

export async function buildExamples(
  outDir: string,
  options: { variants?: boolean } = {},
): Promise<Record<string, string>> {
  fs.mkdirSync(outDir, { recursive: true });
  const files: Record<string, Buffer | Promise<Buffer>> = {
    'sample-app.apk': sampleApk(),
    'sample-app-tests.apk': sampleTestApk(),
    'sample-app.ipa': sampleIpa(),
    'tests-green.zip': testPackage('green'),
    'tests-failing.zip': testPackage('failing'),
  };
  if (options.variants) {
    Object.assign(files, {
      'binary-plist.ipa': sampleIpa({ binaryPlist: true }),
      'adhoc.ipa': sampleIpa({ profile: 'ad-hoc' }),
      'enterprise.ipa': sampleIpa({ profile: 'enterprise' }),
      'appstore.ipa': sampleIpa({ profile: 'app-store' }),
      'simulator.ipa': sampleIpa({ simulator: true }),
      'no-profile.ipa': sampleIpa({ profile: 'none' }),
      'broken.apk': brokenApk(),
      'not-a-zip.apk': Buffer.from('this is plain text, not an APK\n'),
    });
  }
  const written: Record<string, string> = {};
  for (const [name, content] of Object.entries(files)) {
    const target = path.join(outDir, name);
    fs.writeFileSync(target, await content);
    written[name] = target;
  }
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(HERE, 'build.ts')) {
  const outDir = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? path.join(HERE, 'dist');
  const written = await buildExamples(outDir, { variants: process.argv.includes('--variants') });
  for (const target of Object.values(written)) process.stdout.write(`${path.relative(process.cwd(), target)}\n`);
}
