#!/usr/bin/env node
// Compiles src/ into build/, then bundles it (tools/bundle.js) into build/bundle/, the JavaScript
// that bin/devicecloud.js runs: Node starts it in a tenth of the time it took to transpile the
// TypeScript at every start (tsx, with an esbuild service beside every server and agent).
// tsc only emits here (--noCheck): `npm test` and `npm run typecheck` do the type checking (with
// @types/node, a devDependency: the build needs no types, so that it works after
// `npm ci --omit=dev`); an emit of the 200-odd files takes a second, the bundle about as long.
// The emit is incremental (build/.tsbuildinfo): a run with nothing changed costs a second or two,
// which is why `npm start` (prestart), the test suite (test/support/global-setup.ts) and the
// benchmarks run it every time rather than trust a build that may predate an edit.
// `npm install` and `npm ci` run it too (the `prepare` script), with or without --omit=dev, which is
// why `typescript` and `esbuild` are dependencies and not devDependencies.
// Files that are not TypeScript are copied next to the code that finds them by import.meta.url:
// the dashboard (src/web, served by api/app.ts from ../web) and the ADB relay script.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.js';

// Not import.meta.dirname: an install on an old Node should get as far as bin's one-line refusal.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const out = path.join(root, 'build');
const ASSETS = ['web', 'agent/drivers/adb/sandbox-relay.mjs'];

// typescript's exports map hides bin/tsc: found next to its package.json.
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
// tsc trusts its build info, not the files it wrote: without the entry point, start afresh.
if (!fs.existsSync(path.join(out, 'main.js'))) fs.rmSync(path.join(out, '.tsbuildinfo'), { force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--noCheck'], {
    cwd: root,
    stdio: 'inherit',
  });
} catch {
  process.stderr.write('devicecloud: the build failed (tsc, above)\n');
  process.exit(1);
}
for (const asset of ASSETS) {
  // Copied afresh, so that a file removed from src/ does not live on in build/.
  fs.rmSync(path.join(out, asset), { recursive: true, force: true });
  fs.cpSync(path.join(src, asset), path.join(out, asset), { recursive: true });
}
try {
  await bundle(out);
} catch (error) {
  process.stderr.write(`devicecloud: bundling build/ failed: ${error.message}\n`);
  process.exit(1);
}
