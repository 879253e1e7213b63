#!/usr/bin/env node
// Says which Node it needs before loading anything (an old Node would crash in a native module),
// then runs the TypeScript sources directly: tsx registers its loader, and main.ts takes over.
import { isSupportedNode, unsupportedNodeMessage } from './supported-node.js';

if (!isSupportedNode(process.versions.node)) {
  process.stderr.write(`${unsupportedNodeMessage(process.versions.node)}\n`);
  process.exit(3);
}
const { register } = await import('tsx/esm/api');
register();
await import('../src/main.ts');
