// Which Node.js lines devicecloud runs on. Plain JavaScript with no imports, so that an old Node
// can load it and say so before anything native (better-sqlite3 13 crashes on Node 20) is loaded.
// package.json's "engines" says the same; test/unit/supported-node.test.ts keeps the two in step.

export const SUPPORTED = 'Node.js 22 (22.12 or newer), 24 or 26';

/** @param {string} version e.g. "24.21.0" (process.versions.node) */
export function isSupportedNode(version) {
  const [major, minor] = version.split('.').map(Number);
  if (major === 22) return minor >= 12;
  return major === 24 || major >= 26;
}

/** The one line an unsupported Node gets; README.md "Node.js versions" says how to get one. */
export function unsupportedNodeMessage(version) {
  return (
    `devicecloud needs ${SUPPORTED}; this is Node.js ${version}. ` +
    'Inside the project, npm scripts use the Node it installs (node_modules/.bin/node); see README.md "Node.js versions".'
  );
}
