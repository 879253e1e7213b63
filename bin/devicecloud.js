#!/usr/bin/env node
// Says which Node it needs before loading anything (an old Node would crash in a native module),
// then runs the compiled and bundled JavaScript in build/bundle/ (tools/build.js, which
// `npm install` and `npm ci` run), and main.js takes over.
import fs from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { isSupportedNode, unsupportedNodeMessage } from './supported-node.js';

if (!isSupportedNode(process.versions.node)) {
  process.stderr.write(`${unsupportedNodeMessage(process.versions.node)}\n`);
  process.exit(3);
}
const main = new URL('../build/bundle/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  process.stderr.write('devicecloud is not built: run `npm run build` in its folder (npm install and npm ci do it)\n');
  process.exit(3);
}
// V8's compiled code of build/ kept on disk (Node 22.8+): a server or a command starts in about a
// tenth less CPU (the test suite starts hundreds). Beside the build, not in the shared temporary
// folder Node would choose: whoever can write there could plant code, and here only who can change
// the code itself can. Where build/ is not writable the call fails quietly and nothing is cached;
// NODE_COMPILE_CACHE chooses another folder, NODE_DISABLE_COMPILE_CACHE=1 turns it off.
if (process.env.NODE_COMPILE_CACHE === undefined)
  module.enableCompileCache?.(fileURLToPath(new URL('../build/.compile-cache', import.meta.url)));
await import(main.href);
