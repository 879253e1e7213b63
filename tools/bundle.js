// Bundles the compiled build/ with its packages into build/bundle/ (tools/build.js runs it after
// tsc), which is what bin/devicecloud.js runs. Node loads an ES module graph file by file: a server
// loaded about 1,700 (typebox alone 683, kysely 262), and that cost a third of its start
// (docs/benchmarks.md, "Bundled build"). The bundle is split where the CLI imports a role lazily
// (src/main.ts), so `--version` still loads only the few chunks it needs; build/bundle/meta.json
// says which modules each chunk holds (test/e2e/cli-startup.test.ts reads it).
//
// Left outside, loaded from node_modules as they are: native addons, packages that find their own
// files on disk or start programs of their own, and optional packages that are not installed.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const EXTERNAL = [
  'better-sqlite3',
  'pg-native',
  'appium',
  '@appium/*',
  'go-ios',
  '@devicefarmer/adbkit',
  'bufferutil',
  'utf-8-validate',
];

/** Bundles `tree`'s main.js into `tree`/bundle; throws on failure. */
export async function bundle(tree) {
  const outdir = path.resolve(tree, 'bundle');
  const root = path.resolve(tree, '..');
  const result = await build({
    entryPoints: { main: path.join(tree, 'main.js') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: EXTERNAL,
    // CommonJS packages inside an ES module bundle call require(): this one, from the chunk.
    banner: {
      js: "import { createRequire as __devicecloudRequire } from 'node:module'; const require = __devicecloudRequire(import.meta.url);",
    },
    plugins: [ownLocations(tree, outdir)],
    metafile: true,
    // The metafile names modules from the project's folder, wherever the build was started.
    absWorkingDir: root,
    logLevel: 'warning',
  });
  fs.writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  removeOldChunks(outdir, new Set(Object.keys(result.metafile.outputs).map((file) => path.resolve(root, file))));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Chunks are named after their contents, so a build that changed something writes new ones. A
 * process started from the previous build may still import some of its own (a role's modules load
 * when first used), so the previous build's chunks are removed only once they are a day old.
 */
function removeOldChunks(outdir, current) {
  for (const name of fs.readdirSync(outdir)) {
    const file = path.join(outdir, name);
    if (name !== 'meta.json' && !current.has(file) && Date.now() - fs.statSync(file).mtimeMs > DAY_MS)
      fs.rmSync(file, { force: true });
  }
}

/**
 * Our modules find files next to themselves (the dashboard, the ADB relay script, package.json) by
 * import.meta: in a chunk it would be the chunk's, so each of our modules gets its own location
 * back, as a path from the chunk's folder (the bundle moves with build/).
 */
function ownLocations(tree, outdir) {
  const own = `${path.resolve(tree)}${path.sep}`;
  return {
    name: 'own-locations',
    setup(builder) {
      builder.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(own) || args.path.startsWith(`${outdir}${path.sep}`)) return undefined;
        const source = fs.readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        const file = path.relative(outdir, args.path).split(path.sep).join('/');
        const folder = path.posix.dirname(file);
        return {
          loader: 'js',
          contents: source
            .replaceAll('import.meta.url', `new URL(${JSON.stringify(file)}, import.meta.url).href`)
            .replaceAll('import.meta.dirname', `(import.meta.dirname + ${JSON.stringify(`/${folder}`)})`),
        };
      });
    },
  };
}
