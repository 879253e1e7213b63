#!/usr/bin/env node
// Says which Node it needs before loading anything (an old Node would crash in a native module),
// then runs the compiled JavaScript in build/ (tools/build.js, which `npm install` and `npm ci` run),
// and main.js takes over.
import fs from 'node:fs';
import { isSupportedNode, unsupportedNodeMessage } from './supported-node.js';

if (!isSupportedNode(process.versions.node)) {
  process.stderr.write(`${unsupportedNodeMessage(process.versions.node)}\n`);
  process.exit(3);
}
const main = new URL('../build/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  process.stderr.write('devicecloud is not built: run `npm run build` in its folder (npm install and npm ci do it)\n');
  process.exit(3);
}
await import(main.href);
