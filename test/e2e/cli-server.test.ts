import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBudget, startCli, runCli } from '../support/cli.ts';
import { until } from '../support/cloud.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-e2e-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function getJson(url: string, key: string) {
  const response = await fetch(url, {
    headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`, accept: 'application/json' },
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('devicecloud local', () => {
  it(
    'starts the cloud on SQLite under the data dir, prints the URL and a demo key that works, and stops on SIGTERM',
    async () => {
      const dataDir = tempDir();
      const local = startCli(['local', '--port', '0', '--data-dir', dataDir]);
      try {
        const [, url] = await local.waitFor(/running at (http:\/\/\S+)/);
        const [, key] = await local.waitFor(/API key\s+([A-Za-z0-9]{32})/);
        expect(fs.existsSync(path.join(dataDir, 'devicecloud.db'))).toBe(true);
        const me = await getJson(`${url}/api/me`, key!);
        expect(me).toMatchObject({ status: 200, body: { email: 'demo@devicecloud.local' } });
        const xml = await fetch(`${url}/api/v2/me`, {
          headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
        });
        expect(await xml.text()).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><apiUser>/);
        const openapi = (await (await fetch(`${url}/api/v2/openapi.json`)).json()) as {
          openapi: string;
          paths: Record<string, unknown>;
        };
        expect(openapi.openapi).toMatch(/^3\./);
        expect(Object.keys(openapi.paths)).toEqual(
          expect.arrayContaining(['/api/v2/me/projects', '/api/v2/projects/{projectId}/config']),
        );
      } finally {
        expect(await local.stop()).toBe(0);
      }
      // A second start keeps the same demo key and data.
      const again = startCli(['local', '--port', '0', '--data-dir', dataDir]);
      try {
        const [, key2] = await again.waitFor(/API key\s+([A-Za-z0-9]{32})/);
        expect(key2).toMatch(/^[A-Za-z0-9]{32}$/);
        const first = local.output().match(/API key\s+([A-Za-z0-9]{32})/)![1];
        expect(key2).toBe(first);
      } finally {
        await again.stop();
      }
    },
    cliBudget(2),
  ); // `local` twice, each with its agent

  it('runs its agent as a process of its own: restarted when it dies, gone when the cloud is killed', async () => {
    const local = startCli(['local', '--port', '0', '--data-dir', tempDir(), '--log-level', 'info']);
    const agentPid = () => {
      let children = '';
      try {
        children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(local.child.pid)], { encoding: 'utf8' });
      } catch {
        // ps exits 1 when the process has no children (between the agent's death and its restart)
      }
      return Number(
        children
          .split('\n')
          .find((line) => / agent --server /.test(line))
          ?.trim()
          .split(/\s+/)[0] ?? Number.NaN,
      );
    };
    const [, url] = await local.waitFor(/running at (http:\/\/\S+)/);
    const [, key] = await local.waitFor(/API key\s+([A-Za-z0-9]{32})/);
    const first = await until(
      async () => agentPid(),
      (pid) => pid > 0,
    );
    process.kill(first, 'SIGKILL');
    await until(
      async () => agentPid(),
      (pid) => pid > 0 && pid !== first,
      20_000,
    );
    // The new agent took its devices back: they come clean and idle again.
    const idle = await until(
      async () => (await getJson(`${url}/api/v2/devices`, key!)).body.data,
      (devices: Array<{ online: boolean; locked: boolean }>) =>
        devices.length === 6 && devices.every((device) => device.online && !device.locked),
      30_000,
    );
    expect(idle).toHaveLength(6);
    const second = agentPid();
    local.child.kill('SIGKILL');
    await until(
      async () => isAlive(second),
      (alive) => !alive,
      10_000,
    );
  });

  it('refuses a bad setting with one clear line and exit code 3', async () => {
    const result = await runCli(['local', '--port', 'eighty', '--data-dir', tempDir()]);
    expect(result.code).toBe(3);
    expect(result.stderr.trim()).toBe(
      "devicecloud: Invalid --port: 'eighty' must be a port number between 0 and 65535",
    );
    const fromEnv = await runCli(['serve', '--data-dir', tempDir()], { DATABASE_URL: 'mysql://nope' });
    expect(fromEnv.code).toBe(3);
    expect(fromEnv.stderr).toContain('Invalid --database-url (from environment variable DATABASE_URL)');
  });
});

describe('devicecloud admin', () => {
  it(
    'creates users (JSON for scripts) whose key works against a server on the same data',
    async () => {
      const dataDir = tempDir();
      const created = await runCli([
        'admin',
        'create-user',
        '--email',
        'ci@example.com',
        '--password',
        'secret-pass',
        '--plan',
        'GOLD',
        '--json',
        '--data-dir',
        dataDir,
      ]);
      expect(created.code).toBe(0);
      const user = JSON.parse(created.stdout);
      expect(user).toMatchObject({
        id: expect.any(Number),
        email: 'ci@example.com',
        apiKey: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        plan: 'GOLD',
      });

      const duplicate = await runCli([
        'admin',
        'create-user',
        '--email',
        'CI@example.com',
        '--password',
        'secret-pass',
        '--data-dir',
        dataDir,
      ]);
      expect(duplicate.code).toBe(1);
      expect(duplicate.stderr).toContain('already exists');
      const badPlan = await runCli([
        'admin',
        'create-user',
        '--email',
        'x@example.com',
        '--password',
        'secret-pass',
        '--plan',
        'BRONZE',
        '--data-dir',
        dataDir,
      ]);
      expect(badPlan.code).toBe(3);
      expect(badPlan.stderr).toContain("'plan' must be one of PLATINUM, GOLD, SILVER");

      const plan = await runCli([
        'admin',
        'set-plan',
        '--user',
        'ci@example.com',
        '--plan',
        'platinum',
        '--json',
        '--data-dir',
        dataDir,
      ]);
      expect(plan.code).toBe(0);
      expect(JSON.parse(plan.stdout)).toMatchObject({ id: user.id, plan: 'PLATINUM' });
      const quota = await runCli([
        'admin',
        'set-quota',
        '--user',
        'ci@example.com',
        '--bytes',
        '1000',
        '--json',
        '--data-dir',
        dataDir,
      ]);
      expect(quota.code, quota.stderr).toBe(0);
      expect(JSON.parse(quota.stdout)).toEqual({
        id: user.id,
        email: 'ci@example.com',
        storageUsedBytes: 0,
        storageQuotaBytes: 1000,
      });
      const neither = await runCli(['admin', 'set-quota', '--user', 'ci@example.com', '--data-dir', dataDir]);
      expect(neither.code).toBe(3);
      expect(neither.stderr).toContain('--bytes <bytes> or --plan-default');

      const server = startCli(['serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'silent']);
      try {
        const [, url] = await server.waitFor(/running at (http:\/\/\S+)/);
        expect(await getJson(`${url}/api/me`, user.apiKey)).toMatchObject({
          status: 200,
          body: { email: 'ci@example.com', plan: 'PLATINUM', storageUsedBytes: 0, storageQuotaBytes: 1000 },
        });
      } finally {
        await server.stop();
      }
    },
    cliBudget(8),
  ); // seven admin commands and a server
});

describe.runIf(ENGINES.includes('postgres'))('devicecloud serve on PostgreSQL', () => {
  it(
    'migrates a fresh database and serves from it',
    async () => {
      const name = `dc_e2e_${process.pid}_${Date.now()}`;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      try {
        const created = await runCli([
          'admin',
          'create-user',
          '--email',
          'pg@example.com',
          '--password',
          'secret-pass',
          '--json',
          '--database-url',
          url.toString(),
        ]);
        expect(created.code).toBe(0);
        const { apiKey } = JSON.parse(created.stdout);
        // Another machine of the cloud, not given the cloud's keys, would make a key of its own and
        // seal new API keys no other server can open: it stops instead, leaving no key file behind.
        const elsewhere = tempDir();
        const stranger = await runCli(
          ['admin', 'list-users', '--json', '--database-url', url.toString(), '--data-dir', elsewhere],
          { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: '' },
        );
        expect(stranger.code).toBe(3);
        expect(stranger.stderr).toMatch(
          /API keys are sealed with keys this machine does not have \(k[0-9a-f]+\): give it the cloud's keys/,
        );
        expect(fs.existsSync(path.join(elsewhere, 'secrets', 'api-key-encryption.key'))).toBe(false);
        const server = startCli(['serve', '--port', '0', '--log-level', 'silent'], { DATABASE_URL: url.toString() });
        try {
          const [, base] = await server.waitFor(/running at (http:\/\/\S+)/);
          expect(server.output()).toContain('postgres');
          const key = apiKey as string;
          const auth = {
            authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
            accept: 'application/json',
          };
          const project = await fetch(`${base}/api/me/projects`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
            body: 'name=On+PostgreSQL',
          });
          expect(project.status).toBe(201);
          expect(await getJson(`${base}/api/me/projects`, key)).toMatchObject({
            body: { total: 1, data: [{ name: 'On PostgreSQL' }] },
          });
        } finally {
          await server.stop();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      }
    },
    cliBudget(3),
  ); // two admin commands and a server
});
