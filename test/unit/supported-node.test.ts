import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSupportedNode, unsupportedNodeMessage } from '../../bin/supported-node.js';
import { BIN } from '../support/cli.ts';

describe('supported Node.js versions', () => {
  it.each([
    ['18.20.4', false],
    ['20.20.2', false],
    ['21.7.3', false],
    ['22.11.0', false],
    ['22.12.0', true],
    ['22.23.3', true],
    ['23.11.1', false],
    ['24.0.0', true],
    ['24.21.0', true],
    ['25.9.0', false],
    ['26.10.0', true],
    ['27.1.0', true],
  ])('%s supported: %s', (version, supported) => {
    expect(isSupportedNode(version)).toBe(supported);
  });

  it('says the same as package.json engines (change both together)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'));
    expect(pkg.engines.node).toBe('^22.12 || ^24 || >=26');
  });

  it('names the supported versions and the one found in one line', () => {
    const line = unsupportedNodeMessage('20.20.2');
    expect(line).not.toContain('\n');
    expect(line).toMatch(/22.*24.*26/);
    expect(line).toContain('20.20.2');
  });
});

/** An old Node to start the real command with: CI provides one; else the machine's own, if old. */
function findOldNode(): string | undefined {
  const candidates = [process.env.DEVICECLOUD_TEST_OLD_NODE, '/usr/bin/node', '/usr/local/bin/node'];
  for (const candidate of candidates) {
    if (candidate === undefined || !fs.existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (!isSupportedNode(version)) return candidate;
  }
  return undefined;
}

const oldNode = findOldNode();
if (oldNode === undefined) {
  console.warn(
    'SKIPPED: no Node.js older than 22 found (set DEVICECLOUD_TEST_OLD_NODE); the old-Node start is not tested',
  );
}

describe.skipIf(oldNode === undefined)('started on an old Node', () => {
  it.each([
    ['--version'],
    ['serve', '--port', '0'],
    ['local', '--port', '0'],
    ['admin', 'list-users'],
    ['run', '--help'],
  ])('`devicecloud %s` says which versions it needs in one line and exits 3 before loading SQLite', async (...args) => {
    // A data dir of its own: had the command gone on, SQLite would have been opened there (and
    // better-sqlite3 13 crashes on Node 20, which would show as a signal, not exit code 3).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-old-node-'));
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        oldNode as string,
        [BIN, ...args],
        { env: { ...process.env, DEVICECLOUD_DATA_DIR: dataDir }, timeout: 30_000 },
        (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/needs Node\.js 22 .*24 or 26; this is Node\.js \d+\./);
    expect(fs.readdirSync(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
