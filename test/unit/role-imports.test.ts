/**
 * What loading a role's entry really loads (the layers in README.md, "Where things live"): the
 * settings load no database driver and no server layer, and the agent loads no server code. A
 * child process imports the module and reports every module it resolved.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PROBE = path.join(ROOT, 'test/support/loaded-modules.mjs');

/** What importing `files` loads: source paths relative to the repository, packages by name. */
function loadedBy(...files: string[]): Promise<{ hooked: boolean; sources: string[]; packages: string[] }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', PROBE, ...files.map((file) => path.join(ROOT, file))],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null) return reject(new Error(`${error.message}\n${stderr}`));
        const { hooked, urls } = JSON.parse(stdout) as { hooked: boolean; urls: string[] };
        const files = urls
          .filter((url) => url.startsWith('file:'))
          .map((url) => path.relative(ROOT, fileURLToPath(url)));
        const packages = files.flatMap((file) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? []);
        resolve({ hooked, sources: files.filter((file) => file.startsWith('src/')), packages: [...new Set(packages)] });
      },
    );
  });
}

const DATABASE_DRIVERS = ['better-sqlite3', 'pg', 'kysely'];
const folders = (sources: readonly string[]) => [
  ...new Set(sources.map((file) => file.split('/').slice(0, 2).join('/'))),
];

describe('what a role loads', () => {
  it('the settings (config.ts) load no database driver, store, services, files or jobs', async () => {
    const loaded = await loadedBy('src/config.ts');
    expect(loaded.packages.filter((name) => DATABASE_DRIVERS.includes(name))).toEqual([]);
    if (loaded.hooked) {
      expect(loaded.sources).toContain('src/config.ts');
      expect(folders(loaded.sources).filter((folder) => folder.startsWith('src/') && !folder.endsWith('.ts'))).toEqual([
        'src/domain',
      ]);
    }
  });

  it('the notification senders load nodemailer only when a mail is sent, not at start', async () => {
    const loaded = await loadedBy('src/jobs/notification-senders.ts');
    expect(loaded.packages).not.toContain('nodemailer');
    if (loaded.hooked) expect(loaded.sources).toContain('src/jobs/send-mail.ts');
  });

  it('the agent loads no server code (api, services, store, jobs, server) and no database driver', async () => {
    const loaded = await loadedBy(
      'src/agent/agent.ts',
      'src/agent/drivers/index.ts',
      'src/agent/drivers/host/sandbox-choice.ts',
    );
    expect(loaded.packages.filter((name) => DATABASE_DRIVERS.includes(name) || name === 'fastify')).toEqual([]);
    if (loaded.hooked) {
      expect(loaded.sources).toContain('src/agent/drivers/host/sandbox-choice.ts');
      const server = ['src/api', 'src/services', 'src/store', 'src/jobs', 'src/server', 'src/config.ts'];
      expect(folders(loaded.sources).filter((folder) => server.includes(folder))).toEqual([]);
    }
  });
});
