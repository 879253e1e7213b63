/**
 * `devicecloud admin` and the encryption key of API keys, as an operator uses them: the key file
 * made on first use (mode 0600), output that never holds an API key but where giving one is the
 * command's purpose, rotation, and the key given by environment instead (several servers).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/server/open-store.ts';
import { formatSecretKey } from '../../src/domain/secret-keys.ts';
import { generateSecretKey } from '../../src/services/secret-box.ts';
import { authenticateApiKey, revealApiKey } from '../../src/services/users.ts';
import { runCli } from '../support/cli.ts';

describe('the API key encryption key, from the command line (SQLite)', () => {
  let dir: string;
  const keyFile = () => path.join(dir, 'secrets', 'api-key-encryption.key');
  const admin = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const result = await runCli(['admin', ...args, '--data-dir', dir], {
      DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: '',
      ...env,
    });
    return { ...result, output: result.stdout + result.stderr };
  };
  /** The store as a server of this data dir sees it. */
  async function withStore<T>(
    work: (ctx: Awaited<ReturnType<typeof openStore>>['ctx']) => Promise<T>,
    env: NodeJS.ProcessEnv = {},
  ): Promise<T> {
    const { database, ctx } = await openStore(loadConfig({ flags: { dataDir: dir }, env }));
    try {
      return await work(ctx);
    } finally {
      await database.close();
    }
  }
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-secrets-cli-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  let key = '';
  it("creates the key file (0600, in a 0700 folder) on first use, and prints a new user's key that once", async () => {
    const created = await admin([
      'create-user',
      '--email',
      'ops@example.com',
      '--password',
      'ops-password',
      '--role',
      'ADMIN',
    ]);
    expect(created.code, created.stderr).toBe(0);
    key = /API key {2}([A-Za-z0-9]{32})/.exec(created.stdout)![1]!;
    expect(created.stdout).toContain('shown this once');
    expect(fs.statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(keyFile())).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(keyFile(), 'utf8')).toMatch(/^k[0-9a-f]{12}:[A-Za-z0-9+/]{43}=$/m);
    expect(await withStore(async (ctx) => (await authenticateApiKey(ctx, key))?.email)).toBe('ops@example.com');

    for (const args of [
      ['list-users'],
      ['list-users', '--json'],
      ['set-plan', '--user', 'ops@example.com', '--plan', 'GOLD'],
      ['set-role', '--user', '1', '--role', 'ADMIN', '--json'],
    ]) {
      const answer = await admin(args);
      expect(answer.code, answer.stderr).toBe(0);
      expect(answer.output).toContain('ops@example.com');
      expect(answer.output, `admin ${args.join(' ')} shows the key`).not.toContain(key);
      expect(answer.output).not.toMatch(/apiKey|API key/);
    }
  });

  it('rotates: a new key in the file seals every API key, the old one is retired, the API keys stay the same', async () => {
    const before = fs.readFileSync(keyFile(), 'utf8');
    const rotated = await admin(['rotate-secrets-key', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const report = JSON.parse(rotated.stdout);
    expect(report).toMatchObject({ resealed: 1, retired: [] });
    expect(Object.keys(report.keys)).toHaveLength(2);
    expect(report.keys[report.keyId]).toBe(1);
    const after = fs.readFileSync(keyFile(), 'utf8');
    expect(after).toContain(before.split('\n').find((line) => line.startsWith('k'))!); // the old key kept, after the new
    expect(rotated.output).not.toContain(
      after
        .split('\n')
        .find((line) => line.startsWith(report.keyId))!
        .split(':')[1],
    );

    const retired = JSON.parse((await admin(['rotate-secrets-key', '--reseal-only', '--retire', '--json'])).stdout);
    expect(retired).toMatchObject({ keyId: report.keyId, resealed: 0 });
    expect(retired.retired).toHaveLength(1);
    expect(
      fs
        .readFileSync(keyFile(), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('k')),
    ).toHaveLength(1);
    expect(fs.statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(await withStore(async (ctx) => revealApiKey(ctx, (await authenticateApiKey(ctx, key))!))).toBe(key);
  });

  it('refuses a key file others can read, and a bad key setting without repeating it', async () => {
    fs.chmodSync(keyFile(), 0o644);
    const open = await admin(['list-users']);
    expect(open.code).not.toBe(0);
    expect(open.stderr).toMatch(/open to every user of this machine: chmod 600 it/);
    fs.chmodSync(keyFile(), 0o600);

    const secret = `k1:${Buffer.alloc(31, 7).toString('base64')}`; // one byte short
    const bad = await admin(['list-users'], { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: secret });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(
      /Invalid --api-key-encryption-keys \(from environment variable DEVICECLOUD_API_KEY_ENCRYPTION_KEYS\): \(value not shown\) key 1 \('k1'\) must be 32 bytes/,
    );
    expect(bad.output).not.toContain(secret.split(':')[1]);
  });

  it('takes the keys from the environment instead (every server of a cloud the same): generate, put first, re-seal', async () => {
    const generated = await runCli(['admin', 'generate-secrets-key']);
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stdout.trim()).toMatch(/^k[0-9a-f]{12}:[A-Za-z0-9+/]{43}=$/);
    const fileKeys = fs
      .readFileSync(keyFile(), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('k'));
    const env = { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: `${generated.stdout.trim()},${fileKeys[0]}` };
    const resealed = JSON.parse((await admin(['rotate-secrets-key', '--json'], env)).stdout);
    expect(resealed).toMatchObject({ keyId: generated.stdout.split(':')[0], resealed: 1 });
    expect(
      fs
        .readFileSync(keyFile(), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('k')),
    ).toEqual(fileKeys); // the file is not used
    // Without the old key, still opens: everything moved to the new one.
    const onlyNew = { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: generated.stdout.trim() };
    expect(await withStore(async (ctx) => revealApiKey(ctx, (await authenticateApiKey(ctx, key))!), onlyNew)).toBe(key);
    // A key that never sealed it cannot open it.
    const stranger = { DEVICECLOUD_API_KEY_ENCRYPTION_KEYS: formatSecretKey(generateSecretKey()) };
    await expect(
      withStore(async (ctx) => revealApiKey(ctx, (await authenticateApiKey(ctx, key))!), stranger),
    ).rejects.toThrow(/no longer holds/);
    // An operator's command on a machine without the cloud's keys says so (naming key ids only).
    const elsewhere = await admin(['list-users'], stranger);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stderr).toMatch(
      /warning: 1 API keys are encrypted with keys that the setting .* does not hold \(k[0-9a-f]{12}\)/,
    );
    expect(elsewhere.output).not.toContain(stranger.DEVICECLOUD_API_KEY_ENCRYPTION_KEYS.split(':')[1]);
  });
});
