/**
 * The passwords a run hands the device (the crawler's sign-in, the Google account's) reach the
 * agent and nothing else: no API answer, no stored settings, no value of any table, no statement
 * text. They are sealed with the API keys' key ring and survive its rotation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resealApiKeys } from '../../src/services/rotate-secrets.ts';
import { type KeyRing, generateSecretKey } from '../../src/services/secret-box.ts';
import type { SecretKey } from '../../src/domain/secret-keys.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const CRAWLER = 6;
const APP_PASSWORD = 'app-secret-5f3a';
const GOOGLE_PASSWORD = 'google-secret-9c1e';
const SECRETS = [APP_PASSWORD, GOOGLE_PASSWORD];

function mutableRing(keys: SecretKey[]): KeyRing & { keys: SecretKey[] } {
  const ring = {
    keys,
    current: () => ring.keys[0]!,
    find: (id: string) => ring.keys.find((key) => key.id === id),
    ids: () => ring.keys.map((key) => key.id),
    origin: 'the test ring',
  };
  return ring;
}

describe.each(ENGINES)("a run's secrets (%s)", (engine) => {
  let h: Harness;
  let dir: string;
  let ring: ReturnType<typeof mutableRing>;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-run-secrets-'));
    ring = mutableRing([generateSecretKey()]);
    h = await createHarness(engine, {
      keyRing: ring,
      limits: { claimWaitMs: 50 },
      sqliteFile: engine === 'sqlite' ? path.join(dir, 'devicecloud.db') : undefined,
    });
    alice = await h.user();
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8'), androidDevice('a2', 'Pixel 9')]);
    await agent.cleanAll();
    app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
  });
  afterEach(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const body = () => ({
    frameworkId: CRAWLER,
    projectName: 'P',
    files: [{ id: app.id }],
    deviceIds: [agent.deviceIds.get('a1'), agent.deviceIds.get('a2')],
    applicationUsername: 'crawler',
    applicationPassword: APP_PASSWORD,
    deviceLocale: 'fi_FI',
    googleAccountEmail: 'qa@example.com',
    googleAccountPassword: GOOGLE_PASSWORD,
  });
  const expectNoSecret = (text: string, where: string) => {
    for (const secret of SECRETS) expect(text.includes(secret), `${secret} in ${where}`).toBe(false);
  };

  it('hands them to the agent only: no answer, stored settings, table or statement holds them', async () => {
    for (const accept of ['application/json', 'application/xml']) {
      const validated = await alice.call('POST', '/api/me/runs/config', { body: body(), headers: { accept } });
      expect(validated.status, validated.text).toBe(200);
      expectNoSecret(validated.text, `the validated config (${accept})`);
    }
    const started = await alice.call('POST', '/api/v2/runs', { json: true, body: body() });
    expect(started.status, started.text).toBe(201);
    expectNoSecret(started.text, 'the started run');
    const { id: runId, projectId } = started.body;
    expect(started.body.config).toMatchObject({ applicationUsername: 'crawler', googleAccountEmail: 'qa@example.com' });
    expect(Object.keys(started.body.config)).not.toContain('v');

    const { assignments } = await agent.claim(['a1']);
    expect(assignments[0]).toMatchObject({
      credentials: { username: 'crawler', password: APP_PASSWORD },
      deviceSettings: {
        locale: 'fi_FI',
        wifi: null,
        googleAccount: { email: 'qa@example.com', password: GOOGLE_PASSWORD },
      },
    });
    for (const url of [
      `/api/v2/runs/${runId}`,
      `/api/me/projects/${projectId}/runs/${runId}`,
      `/api/me/projects/${projectId}/runs`,
      `/api/v2/runs/${runId}/device-sessions`,
      `/api/me/projects/${projectId}`,
    ]) {
      for (const accept of ['application/json', 'application/xml']) {
        const answer = await alice.call('GET', url, { headers: { accept } });
        expect(answer.status, `${url}: ${answer.text}`).toBe(200);
        expectNoSecret(answer.text, `${url} (${accept})`);
      }
    }

    const stored = await h.database.db
      .selectFrom('test_runs')
      .select('config_json')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.config_json)).toMatchObject({ v: 1, applicationUsername: 'crawler' });
    expectNoSecret(stored.config_json, 'the stored settings');
    const tables =
      engine === 'sqlite'
        ? (
            await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(h.database.db)
          ).rows.map((row) => row.name)
        : (
            await sql<{
              name: string;
            }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`.execute(
              h.database.db,
            )
          ).rows.map((row) => row.name);
    expect(tables).toContain('test_run_secrets');
    for (const table of tables) {
      for (const row of (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(h.database.db))
        .rows)
        expectNoSecret(JSON.stringify(row), `table ${table}`);
    }
    for (const statement of h.queries) expectNoSecret(statement, 'a statement');
    if (engine === 'sqlite') {
      for (const name of fs.readdirSync(dir))
        expectNoSecret(fs.readFileSync(path.join(dir, name)).toString('latin1'), name);
    }
  });

  it('keeps them through a rotation of the key ring, the old key retired', async () => {
    const started = await alice.call('POST', '/api/v2/runs', { json: true, body: body() });
    expect(started.status, started.text).toBe(201);
    const old = ring.keys[0]!;
    ring.keys = [generateSecretKey(), old];
    const report = await resealApiKeys(h.ctx);
    // Alice's API key and the run's secrets.
    expect(report).toMatchObject({ keyId: ring.keys[0]!.id, resealed: 2 });
    expect(report.byKeyId.get(ring.keys[0]!.id)).toBe(2);
    expect(report.byKeyId.get(old.id) ?? 0).toBe(0);
    ring.keys = [ring.keys[0]!];
    const { assignments } = await agent.claim(['a2']);
    expect(assignments[0]).toMatchObject({
      credentials: { password: APP_PASSWORD },
      deviceSettings: { googleAccount: { password: GOOGLE_PASSWORD } },
    });
  });
});
