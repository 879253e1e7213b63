/**
 * The CLI starts fast because it runs compiled, bundled JavaScript and loads a role only when its
 * command runs (src/main.ts; the bundle is split there, tools/bundle.js). Not a timing test (bench/suites/startup.ts measures): it checks which
 * modules the real command loads, so it fails as soon as --version or --help import the server,
 * the store or the agent again.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TRACE = path.join(import.meta.dirname, '../support/module-trace.mjs');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-startup-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What the roles need and a client command must not load. */
const ROLE_PACKAGES = [
  'fastify',
  '@fastify',
  'kysely',
  'better-sqlite3',
  'pg',
  'pino',
  'typebox',
  '@devicefarmer',
  'yauzl',
  'tsx',
  'esbuild',
];
const ROLE_FOLDERS = ['api', 'store', 'agent', 'scheduler', 'protocol'];

interface Traced {
  readonly code: number | null;
  readonly stdout: string;
  /** The files loaded, relative to the project (node_modules/… or build/…). */
  readonly files: string[];
}

let runs = 0;
function traced(args: readonly string[]): Promise<Traced> {
  const out = path.join(dir, `trace-${++runs}.txt`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TRACE, BIN, ...args],
      { env: { ...process.env, DEVICECLOUD_MODULE_TRACE: out }, timeout: 60_000 },
      (error, stdout) => {
        const urls = fs.readFileSync(out, 'utf8').split('\n');
        const files = urls
          .filter((url) => url.startsWith('file:'))
          .flatMap((url) => modulesIn(path.relative(ROOT, fileURLToPath(url))));
        resolve({ code: error === null ? 0 : (error.code as number), stdout, files });
      },
    );
  });
}

/** What build/bundle/ holds: each chunk's modules, as tools/bundle.js wrote them down. */
const BUNDLE = JSON.parse(fs.readFileSync(path.join(ROOT, 'build/bundle/meta.json'), 'utf8')) as {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
};

/** A file loaded: itself, and, for a chunk of the bundle, the modules bundled into it. */
function modulesIn(file: string): string[] {
  const chunk = BUNDLE.outputs[file];
  return chunk === undefined ? [file] : [file, ...Object.keys(chunk.inputs)];
}

function packagesOf(files: readonly string[]): Set<string> {
  const names = files
    .filter((file) => file.startsWith('node_modules/'))
    .map((file) =>
      file
        .split('/')
        .slice(1, file.split('/')[1]!.startsWith('@') ? 3 : 2)
        .join('/'),
    );
  return new Set(names);
}

function roleModules(files: readonly string[]): string[] {
  const packages = [...packagesOf(files)].filter((name) =>
    ROLE_PACKAGES.some((role) => name === role || name.startsWith(`${role}/`)),
  );
  const own = files.filter(
    (file) => ROLE_FOLDERS.some((folder) => file.startsWith(`build/${folder}/`)) || file === 'build/server/start.js',
  );
  return [...packages, ...own];
}

describe('devicecloud starts without the roles it does not run', () => {
  it.each(['--version', '--help', 'run --help', 'admin --help'])(
    'devicecloud %s loads compiled JavaScript, commander and the client only',
    async (line) => {
      const result = await traced(line.split(' '));
      expect(result.code).toBe(0);
      expect(result.files).toContain('build/main.js');
      expect(result.files.filter((file) => file.endsWith('.ts'))).toEqual([]);
      expect(roleModules(result.files)).toEqual([]);
      expect(packagesOf(result.files)).toContain('commander');
    },
  );

  it('--help still lists every command', async () => {
    const { stdout } = await traced(['--help']);
    for (const command of ['local', 'serve', 'admin', 'agent', 'run', 'login', 'runs', 'devices', 'groups'])
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('a command that needs the store loads it (the trace sees what a role loads)', async () => {
    const result = await traced(['admin', 'list-users', '--json', '--data-dir', path.join(dir, 'data')]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('[]');
    expect(roleModules(result.files)).toEqual(
      expect.arrayContaining(['kysely', 'better-sqlite3', 'build/store/db.js']),
    );
  });
});
