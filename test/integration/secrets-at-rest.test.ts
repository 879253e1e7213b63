/**
 * A copy of the database (the SQLite file, a dump of PostgreSQL's tables) gives no account: the
 * test plays someone holding one, and tries every value found there as every kind of credential.
 * API keys are sealed with a key kept outside the database, for the row they belong to, and
 * survive a rotation of that key.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resealApiKeys } from '../../src/services/rotate-secrets.ts';
import { type SecretKey, SecretKeyError } from '../../src/domain/secret-keys.ts';
import { type KeyRing, generateSecretKey } from '../../src/services/secret-box.ts';
import { revealApiKey } from '../../src/services/users.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';
import { type Harness, type TestUser, call, createHarness } from '../support/harness.ts';

/** A ring whose keys the test changes, as an operator edits the key file. */
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

describe.each(ENGINES)('API keys at rest (%s)', (engine) => {
  let h: Harness;
  let dir: string;
  let ring: ReturnType<typeof mutableRing>;
  let users: TestUser[];
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-at-rest-'));
    ring = mutableRing([generateSecretKey()]);
    h = await createHarness(engine, {
      keyRing: ring,
      sqliteFile: engine === 'sqlite' ? path.join(dir, 'devicecloud.db') : undefined,
    });
    users = [await h.user({ email: 'alice@example.com' }), await h.user({ email: 'bob@example.com', role: 'ADMIN' })];
  });
  afterEach(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every value of every table, as text: what a copy of the database shows. */
  async function everyValue(): Promise<Set<string>> {
    const db = h.database.db;
    const tables =
      engine === 'sqlite'
        ? (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(db)).rows.map(
            (row) => row.name,
          )
        : (
            await sql<{
              name: string;
            }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`.execute(
              db,
            )
          ).rows.map((row) => row.name);
    expect(tables).toContain('users');
    const values = new Set<string>();
    for (const table of tables) {
      const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db)).rows;
      for (const row of rows) for (const value of Object.values(row)) if (value !== null) values.add(String(value));
    }
    return values;
  }

  /** Every way a value could be a credential: API key (Basic, as is), bearer token, session cookie. */
  async function opensAnything(value: string): Promise<string | undefined> {
    const attempts: Array<[string, Record<string, string>, string]> = [
      ['Basic', { authorization: `Basic ${Buffer.from(`${value}:`).toString('base64')}` }, '/api/me'],
      [
        'Basic as user and password',
        { authorization: `Basic ${Buffer.from(`${value}:${value}`).toString('base64')}` },
        '/api/me',
      ],
      ['as is', { authorization: value }, '/api/me'],
      ['bearer', { authorization: `Bearer ${value}` }, '/api/me'],
      ['cookie', { cookie: `dc_session=${encodeURIComponent(value)}` }, '/api/me'],
      ['access_token', {}, `/api/me?access_token=${encodeURIComponent(value)}`],
    ];
    for (const [how, headers, url] of attempts) {
      const answer = await call(h.app, 'GET', url, { json: true, headers });
      if (answer.status === 200) return how;
      expect([400, 401]).toContain(answer.status);
    }
    return undefined;
  }

  it('holds no value, in any table, that opens an account; every key still works and is revealed to its owner', async () => {
    // Sessions, tokens and a reset: the database holds everything a running cloud writes.
    await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'alice@example.com', password: 'password-1234' },
    });
    await call(h.app, 'POST', '/oauth/token', {
      form: {
        client_id: 'testdroid-cloud-api',
        grant_type: 'password',
        username: 'bob@example.com',
        password: 'password-1234',
      },
    });
    const reset = await users[0]!.call('POST', '/api/me/reset-api-key', { json: true });
    const keys = [reset.body.apiKey as string, users[1]!.key];

    const values = await everyValue();
    expect(values.size).toBeGreaterThan(20);
    for (const value of values) {
      for (const key of keys) expect(value.includes(key), 'an API key in the clear').toBe(false);
      expect(await opensAnything(value), `the stored value '${value.slice(0, 12)}…' opens an account`).toBeUndefined();
    }
    for (const [index, key] of keys.entries()) {
      expect((await call(h.app, 'GET', '/api/me', { key, json: true })).status).toBe(200);
      expect(await revealApiKey(h.ctx, users[index]!.user)).toBe(key);
    }

    if (engine === 'sqlite') {
      // The file itself, as a backup copies it (with its write-ahead log): no key in its bytes, and
      // the copy opened as a database shows nothing that opens an account either.
      const copy = path.join(dir, 'stolen.db');
      fs.copyFileSync(path.join(dir, 'devicecloud.db'), copy);
      if (fs.existsSync(path.join(dir, 'devicecloud.db-wal')))
        fs.copyFileSync(path.join(dir, 'devicecloud.db-wal'), `${copy}-wal`);
      for (const file of [copy, `${copy}-wal`].filter((name) => fs.existsSync(name))) {
        const bytes = fs.readFileSync(file);
        for (const key of [...keys, users[0]!.key])
          expect(bytes.includes(Buffer.from(key)), `${key.slice(0, 4)}… in ${path.basename(file)}`).toBe(false);
      }
      const stolen = new BetterSqlite3(copy, { readonly: true });
      try {
        const row = stolen.prepare('SELECT * FROM users WHERE email = ?').get('bob@example.com') as Record<
          string,
          unknown
        >;
        expect(Object.keys(row)).not.toContain('api_key');
        for (const value of Object.values(row))
          if (value !== null) expect(await opensAnything(String(value))).toBeUndefined();
      } finally {
        stolen.close();
      }
    } else if (fs.existsSync('/usr/bin/pg_dump')) {
      // A real dump of the users table.
      const schema = (await sql<{ name: string }>`SELECT current_schema() AS name`.execute(h.database.db)).rows[0]!
        .name;
      const dump = execFileSync('/usr/bin/pg_dump', ['--data-only', `--table=${schema}.users`, POSTGRES_URL], {
        encoding: 'utf8',
      });
      expect(dump).toContain('bob@example.com');
      for (const key of keys) expect(dump).not.toContain(key);
      for (const token of new Set(dump.split(/[\s\t]+/).filter((word) => word.length >= 16)))
        expect(await opensAnything(token)).toBeUndefined();
    }
  });

  it('binds each sealed key to its row: a ciphertext copied onto another user does not open', async () => {
    const db = h.database.db;
    const [alice, bob] = users as [TestUser, TestUser];
    const sealed = await db
      .selectFrom('users')
      .select(['api_key_sealed', 'api_key_key_id'])
      .where('id', '=', alice.user.id)
      .executeTakeFirstOrThrow();
    await db.updateTable('users').set(sealed).where('id', '=', bob.user.id).execute();
    await expect(revealApiKey(h.ctx, bob.user)).rejects.toThrow(SecretKeyError);
    await expect(revealApiKey(h.ctx, alice.user)).resolves.toBe(alice.key);
    // Altered by one character: refused too.
    const altered =
      sealed.api_key_sealed!.slice(0, 20) +
      (sealed.api_key_sealed![20] === 'A' ? 'B' : 'A') +
      sealed.api_key_sealed!.slice(21);
    await db.updateTable('users').set({ api_key_sealed: altered }).where('id', '=', alice.user.id).execute();
    await expect(revealApiKey(h.ctx, alice.user)).rejects.toThrow(/altered or belongs to another record/);
    // Lookup is by hash: the key keeps working for the API even so.
    expect((await alice.call('GET', '/api/me')).status).toBe(200);
  });

  it('rotates the key: old keys open what they sealed, re-sealing moves every row to the new one', async () => {
    const old = ring.keys[0]!;
    ring.keys = [generateSecretKey(), old];
    const carol = await h.user({ email: 'carol@example.com' });
    const keyIds = async () =>
      (await h.database.db.selectFrom('users').select(['email', 'api_key_key_id']).orderBy('id').execute()).map(
        (row) => row.api_key_key_id,
      );
    expect(await keyIds()).toEqual([old.id, old.id, ring.keys[0]!.id]);
    for (const user of [...users, carol]) expect(await revealApiKey(h.ctx, user.user)).toBe(user.key);

    const report = await resealApiKeys(h.ctx);
    expect(report).toMatchObject({ keyId: ring.keys[0]!.id, resealed: 2 });
    expect(report.byKeyId.get(ring.keys[0]!.id)).toBe(3);
    expect(await keyIds()).toEqual([ring.keys[0]!.id, ring.keys[0]!.id, ring.keys[0]!.id]);
    ring.keys = [ring.keys[0]!]; // the old key retired
    for (const user of [...users, carol]) {
      expect(await revealApiKey(h.ctx, user.user)).toBe(user.key);
      expect((await user.call('GET', '/api/me')).status).toBe(200);
    }
    // Without its key, a sealed key cannot be shown (the API key itself still works).
    ring.keys = [generateSecretKey()];
    await expect(revealApiKey(h.ctx, carol.user)).rejects.toThrow(/no longer holds/);
    expect((await carol.call('GET', '/api/me')).status).toBe(200);
    expect((await resealApiKeys(h.ctx).catch((error: Error) => error)) instanceof SecretKeyError).toBe(true);
  });
});
